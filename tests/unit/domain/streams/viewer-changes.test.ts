import { describe, expect, it } from 'vitest';
import type { PendingRequest } from '../../../../domain/deployments/types.js';
import { resourceSources, targetListView } from '../../../../domain/streams/resource-sources.js';
import {
  changesMessages,
  pushResourceChanges,
  type ViewerChangesDeps,
  type WrittenRecord,
} from '../../../../domain/streams/viewer-changes.js';
import type {
  ViewerConnection,
  ViewerMessage,
  ViewerRegistry,
  ViewerTopic,
} from '../../../../domain/streams/viewer-ports.js';
import { topicKey } from '../../../../domain/streams/viewer-ports.js';
import type { Target } from '../../../../domain/targets/types.js';
import { FakeClock } from '../../../fakes/clock.js';
import { aDeployment, aPendingRequest } from '../../../fakes/deployments.js';

const versions = { server: '1.0.0', agentRelease: () => null };

const connection = (connectionId: string, tenantId: string | null = null): ViewerConnection => ({
  connectionId,
  userId: `user-${connectionId}`,
  tenantId,
  permissions: ['deployments:read', 'pending_deployments:read', 'targets:read'],
  credential: { kind: 'session', sseSessionId: 's1', apiKeyId: null },
  connectedAt: '2026-11-22T09:00:00.000Z',
  expiresAt: '2026-11-22T11:00:00.000Z',
});

const aTarget = (overrides: Partial<Target> = {}): Target => ({
  id: 't0000000-0000-4000-8000-000000000001',
  shortId: 't1',
  name: 'web-1',
  hostname: 'web-1.local',
  os: 'linux',
  arch: 'x64',
  agentVersion: '1.0.0',
  tags: [],
  tenantId: null,
  environmentId: null,
  agentTokenHash: 'hash',
  lastHeartbeatAt: '2026-11-22T09:59:50.000Z',
  createdAt: '2026-11-22T09:00:00.000Z',
  updatedAt: '2026-11-22T09:00:00.000Z',
  ...overrides,
});

/** Subscribers by topic key; each query counted. */
class Registry implements Pick<ViewerRegistry, 'subscribers' | 'disconnect'> {
  queries: string[] = [];
  disconnected: string[] = [];
  constructor(private readonly watching: Record<string, ViewerConnection[]>) {}
  async subscribers(topic: ViewerTopic): Promise<readonly ViewerConnection[]> {
    this.queries.push(topicKey(topic));
    return this.watching[topicKey(topic)] ?? [];
  }
  async disconnect(connectionId: string): Promise<void> {
    this.disconnected.push(connectionId);
  }
}

const setup = (watching: Record<string, ViewerConnection[]>, pending: PendingRequest[] = [], gone: string[] = []) => {
  const registry = new Registry(watching);
  const sent: { connectionId: string; message: ViewerMessage }[] = [];
  const deps: ViewerChangesDeps = {
    registry,
    push: {
      send: async (connectionId, message) => {
        if (gone.includes(connectionId)) return 'gone';
        sent.push({ connectionId, message });
        return 'sent';
      },
    },
    pending: { listAll: async () => pending },
    clock: new FakeClock(new Date('2026-11-22T10:00:00.000Z')),
    warn: () => undefined,
    sources: resourceSources(versions),
    targetView: targetListView(versions),
  };
  const push = (batch: readonly WrittenRecord[]) => pushResourceChanges(deps, batch);
  return { registry, sent, push };
};

const changesOf = (message: ViewerMessage) => (message.type === 'changes' ? message.changes : []);

describe('pushResourceChanges', () => {
  it('sends a created deployment to its tenant and to all, never to another tenant', async () => {
    // Prepare
    const { sent, push } = setup({
      'resources#deployments#t1': [connection('mine', 't1')],
      'resources#deployments#t2': [connection('other', 't2')],
      'resources#deployments#*': [connection('global')],
    });
    const deployment = aDeployment({ tenantId: 't1' });
    // Act
    await push([{ resourceType: 'deployments', new: deployment }]);
    // Assess
    expect(sent.map((s) => s.connectionId).sort()).toEqual(['global', 'mine']);
    expect(sent[0]!.message).toEqual({
      type: 'changes',
      resource_type: 'deployments',
      changes: [
        {
          event: 'created',
          data: {
            type: 'created',
            resource_type: 'deployments',
            id: deployment.id,
            record: expect.objectContaining({ id: deployment.id, state: 'running' }),
          },
        },
      ],
    });
  });

  it('sends a global record only to the list of all', async () => {
    // Prepare
    const { sent, registry, push } = setup({ 'resources#deployments#*': [connection('global')] });
    // Act
    await push([{ resourceType: 'deployments', new: aDeployment({ tenantId: null }) }]);
    // Assess
    expect(registry.queries).toEqual(['resources#deployments#*']);
    expect(sent.map((s) => s.connectionId)).toEqual(['global']);
  });

  it('skips a write whose view did not change (a target heartbeat), and reports a status change', async () => {
    // Prepare
    const { sent, push } = setup({ 'resources#targets#*': [connection('c1')] });
    const before = aTarget();
    const heartbeat = aTarget({ lastHeartbeatAt: '2026-11-22T09:59:59.000Z' });
    const revived = aTarget({ lastHeartbeatAt: '2026-11-22T09:50:00.000Z' });
    // Act
    await push([{ resourceType: 'targets', old: before, new: heartbeat }]);
    const afterHeartbeat = sent.length;
    await push([{ resourceType: 'targets', old: revived, new: heartbeat }]);
    // Assess
    expect(afterHeartbeat).toBe(0);
    expect(changesOf(sent[0]!.message)).toMatchObject([
      { event: 'updated', data: { record: { id: before.id, status: 'online' } } },
    ]);
  });

  it('reports a deleted target with its last view', async () => {
    // Prepare
    const { sent, push } = setup({ 'resources#targets#*': [connection('c1')] });
    // Act
    await push([{ resourceType: 'targets', old: aTarget() }]);
    // Assess
    expect(changesOf(sent[0]!.message)).toMatchObject([{ event: 'deleted', data: { record: { name: 'web-1' } } }]);
  });

  it('batches a whole batch into one message per connection and resource, in order', async () => {
    // Prepare
    const { sent, push } = setup({ 'resources#deployments#*': [connection('c1')] });
    const running = aDeployment();
    // Act
    await push([
      { resourceType: 'deployments', new: running },
      { resourceType: 'deployments', old: running, new: { ...running, state: 'success' } },
    ]);
    // Assess
    expect(sent).toHaveLength(1);
    expect(changesOf(sent[0]!.message).map((c) => c.event)).toEqual(['created', 'updated']);
  });

  it('re-sends the other pending requests when the queue moved, with their new positions', async () => {
    // Prepare
    const first = aPendingRequest({ id: 'p1', queuedAt: '2026-11-22T10:00:00.000Z' });
    const second = aPendingRequest({ id: 'p2', queuedAt: '2026-11-22T10:00:01.000Z' });
    const dispatched = { ...first, status: 'dispatched' as const };
    const { sent, push } = setup({ 'resources#pending_deployments#*': [connection('c1')] }, [dispatched, second]);
    // Act
    await push([{ resourceType: 'pending_deployments', old: first, new: dispatched }]);
    // Assess
    expect(changesOf(sent[0]!.message)).toMatchObject([
      { event: 'updated', data: { id: 'p1', record: { status: 'dispatched' } } },
      { event: 'updated', data: { id: 'p2', record: { queue_position: 1 } } },
    ]);
  });

  it('forgets a gone connection and still sends to the others', async () => {
    // Prepare
    const { sent, registry, push } = setup(
      { 'resources#deployments#*': [connection('gone'), connection('here')] },
      [],
      ['gone'],
    );
    // Act
    await push([{ resourceType: 'deployments', new: aDeployment() }]);
    // Assess
    expect(registry.disconnected).toEqual(['gone']);
    expect(sent.map((s) => s.connectionId)).toEqual(['here']);
  });

  it('does not send a list the connection has no permission for', async () => {
    // Prepare
    const blind = { ...connection('blind'), permissions: ['targets:read' as const] };
    const { sent, push } = setup({ 'resources#deployments#*': [blind] });
    // Act
    await push([{ resourceType: 'deployments', new: aDeployment() }]);
    // Assess
    expect(sent).toEqual([]);
  });
});

describe('changesMessages', () => {
  it('splits at 100 changes a message', () => {
    // Prepare
    const changes = Array.from({ length: 150 }, (_, i) => ({
      event: 'created' as const,
      id: `d${i}`,
      record: { id: `d${i}` },
    }));
    // Act
    const messages = changesMessages('deployments', changes);
    // Assess
    expect(messages.map((m) => changesOf(m).length)).toEqual([100, 50]);
  });
});
