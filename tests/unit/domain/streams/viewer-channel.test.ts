// The viewer channel's use cases with fakes: connect (verify, per-user limit, expiry), subscribe to a deployment
// (checks, catch-up in chunks, the second read after the writers' cache period, the end appended once when its store lacks it), unsubscribe,
// ping, and closing on revocation and expiry.
import { beforeEach, describe, expect, it } from 'vitest';
import { NotFoundError, ValidationError } from '../../../../domain/errors.js';
import { stateEventKey, type NewEvent } from '../../../../domain/deployments/events.js';
import { InsufficientPermissionsError, InvalidTokenError } from '../../../../domain/identity/errors.js';
import type { SseGrant } from '../../../../domain/identity/ports.js';
import type { Caller } from '../../../../domain/identity/types.js';
import {
  connectViewer,
  pingViewer,
  TooManyViewersError,
  unsubscribeViewer,
  VIEWER_TOPIC_LIMIT,
  type ViewerSubscribeDeps,
} from '../../../../domain/streams/viewer-channel.js';
import { resourceSources } from '../../../../domain/streams/resource-sources.js';
import type { ViewerEvent, ViewerMessage } from '../../../../domain/streams/viewer-ports.js';
import { closeViewers, expireViewers } from '../../../../domain/streams/viewer-revocation.js';
import { chunkEvents } from '../../../../domain/streams/viewer-messages.js';
import { subscribeViewer } from '../../../../domain/streams/viewer-subscribe.js';
import { FakeClock } from '../../../fakes/clock.js';
import { aDeployment, FakeDeploymentRepository, FakePendingRequestRepository } from '../../../fakes/deployments.js';
import { FakeTargetRepository } from '../../../fakes/targets.js';
import { aViewer, FakeViewerPush, FakeViewerRegistry } from '../../../fakes/viewers.js';
import { FakeDeploymentEventStore } from '../../functions/streams/fake-event-store.js';

const NOW = new Date('2026-01-01T00:30:00.000Z');

const aCaller = (overrides: Partial<Caller> = {}): Caller => ({
  kind: 'user',
  userId: 'u-1',
  tenantId: null,
  roles: ['viewer'],
  permissions: new Set(['deployments:read']),
  ...overrides,
});

const aGrant = (overrides: Partial<SseGrant> = {}): SseGrant => ({
  kind: 'user',
  userId: 'u-1',
  apiKeyId: null,
  sessionId: 'sse-1',
  sessionStartedAt: NOW.getTime() - 1000,
  ...overrides,
});

const logLine = (n: number): NewEvent => ({
  at: '2026-01-01T00:00:00.000Z',
  event: {
    type: 'log',
    log: {
      timestamp: '2026-01-01T00:00:00.000Z',
      level: 'info',
      step_id: null,
      target_id: null,
      target_name: null,
      message: `line ${n}`,
      metadata: null,
    },
  },
});

const setup = () => {
  const clock = new FakeClock(NOW);
  const registry = new FakeViewerRegistry();
  const push = new FakeViewerPush();
  const deployments = new FakeDeploymentRepository();
  const events = new FakeDeploymentEventStore();
  const verified = { caller: aCaller(), grant: aGrant() };
  const invalid = new Set<string>();
  const keyExpiries = new Map<string, string | null>();
  const warnings: string[] = [];
  let duringWait: () => Promise<void> = async () => undefined;
  const waits: number[] = [];
  const deps: ViewerSubscribeDeps = {
    registry,
    push,
    clock,
    connectionsPerUser: 3,
    warn: (message) => warnings.push(message),
    auth: {
      verify: async (token) => {
        if (token !== 'good') throw new InvalidTokenError('bad token');
        return verified;
      },
      stillValid: async (grant) => !invalid.has(grant.apiKeyId ?? grant.sessionId),
      apiKeyExpiry: async (id) => keyExpiries.get(id) ?? null,
    },
    deployments,
    events,
    resources: {
      lists: { deployments, pending: new FakePendingRequestRepository(), targets: new FakeTargetRepository(), clock },
      sources: resourceSources({ server: '1.0.0', agentRelease: () => null }),
    },
    wait: async (ms) => {
      waits.push(ms);
      clock.advance(ms);
      await duringWait();
    },
  };
  return {
    deps,
    clock,
    registry,
    push,
    deployments,
    events,
    verified,
    invalid,
    keyExpiries,
    warnings,
    waits,
    onWait: (hook: () => Promise<void>) => {
      duringWait = hook;
    },
  };
};

const idsOf = (messages: readonly ViewerMessage[]): number[] =>
  messages.flatMap((m) => (m.type === 'events' ? m.events.map((e) => e.id) : []));

const echo = (deploymentId: string) => ({ ref: 'r1', topic: { topic: 'deployment', deployment_id: deploymentId } });

describe('connectViewer', () => {
  it('stores the verified caller until the 2-hour limit, or the API key expiry when sooner', async () => {
    // Arrange
    const t = setup();
    t.keyExpiries.set('k-1', '2026-01-01T01:00:00.000Z');
    // Act
    const session = await connectViewer(t.deps, 'good', 'c-session');
    Object.assign(t.verified, {
      caller: aCaller({ kind: 'api_key', apiKeyId: 'k-1', tenantId: 't-1' }),
      grant: aGrant({ kind: 'api_key', apiKeyId: 'k-1', sessionId: 'sse-2' }),
    });
    const key = await connectViewer(t.deps, 'good', 'c-key');
    // Assess
    expect(session).toEqual({
      connectionId: 'c-session',
      userId: 'u-1',
      tenantId: null,
      permissions: ['deployments:read'],
      credential: { kind: 'session', sseSessionId: 'sse-1', apiKeyId: null },
      connectedAt: NOW.toISOString(),
      expiresAt: '2026-01-01T02:30:00.000Z',
    });
    expect(key).toMatchObject({
      tenantId: 't-1',
      credential: { kind: 'api_key', sseSessionId: 'sse-2', apiKeyId: 'k-1' },
      expiresAt: '2026-01-01T01:00:00.000Z',
    });
    expect(await t.registry.get('c-key')).toEqual(key);
  });

  it('refuses a bad token and a connection past the per-user limit; expired ones do not count', async () => {
    // Arrange
    const t = setup();
    await t.registry.connect(aViewer({ connectionId: 'old', expiresAt: '2026-01-01T00:10:00.000Z' }));
    await connectViewer(t.deps, 'good', 'c-1');
    await connectViewer(t.deps, 'good', 'c-2');
    await connectViewer(t.deps, 'good', 'c-3');
    // Act
    const bad = connectViewer(t.deps, 'used', 'c-x');
    const fourth = connectViewer(t.deps, 'good', 'c-4');
    // Assess
    await expect(bad).rejects.toBeInstanceOf(InvalidTokenError);
    await expect(fourth).rejects.toBeInstanceOf(TooManyViewersError);
    await expect(connectViewer(t.deps, 'good', 'c-4')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    expect(await t.registry.get('c-4')).toBeUndefined();
  });
});

describe('subscribeViewer to a deployment', () => {
  let t: ReturnType<typeof setup>;
  const deployment = aDeployment({ state: 'success', completedAt: '2026-01-01T00:20:00.000Z' });

  beforeEach(async () => {
    t = setup();
    t.deployments.put(deployment);
    await t.registry.connect(aViewer());
  });

  it('answers subscribed, then the whole history in messages of 100, then the end it appends (keyed, once) for a finished deployment whose store lacks it', async () => {
    // Arrange
    await t.events.append(
      deployment.id,
      Array.from({ length: 250 }, (_, i) => logLine(i + 1)),
    );
    // Act
    await subscribeViewer(t.deps, 'conn-1', { topic: 'deployment', deploymentId: 'd1', lastEventId: 0 }, echo('d1'));
    // Assess
    const sent = t.push.to('conn-1');
    expect(sent[0]).toEqual({ type: 'subscribed', ref: 'r1', topic: { topic: 'deployment', deployment_id: 'd1' } });
    const batches = sent.filter((m) => m.type === 'events');
    expect(batches.map((m) => (m.type === 'events' ? m.events.length : 0))).toEqual([100, 100, 50, 1]);
    expect(idsOf(sent)).toEqual(Array.from({ length: 251 }, (_, i) => i + 1));
    const last = batches.at(-1);
    expect(last).toMatchObject({
      deployment_id: deployment.id,
      events: [{ id: 251, event: 'state_change', data: { type: 'state_change', new_state: 'success' } }],
    });
    expect(await t.registry.subscribers({ kind: 'deployment', deploymentId: deployment.id })).toHaveLength(1);
  });

  it('resumes after last_event_id, and reads once more after the cache period for what was written meanwhile', async () => {
    // Arrange
    const running = t.deployments.put({ ...deployment, state: 'running', completedAt: null });
    await t.events.append(
      running.id,
      Array.from({ length: 10 }, (_, i) => logLine(i + 1)),
    );
    t.onWait(async () => {
      await t.events.append(running.id, [logLine(11), logLine(12)]);
    });
    // Act
    await subscribeViewer(
      t.deps,
      'conn-1',
      { topic: 'deployment', deploymentId: running.id, lastEventId: 7 },
      echo(running.id),
    );
    // Assess
    expect(idsOf(t.push.to('conn-1'))).toEqual([8, 9, 10, 11, 12]);
    expect(t.waits).toHaveLength(1);
    expect(t.waits[0]).toBeGreaterThanOrEqual(1000);
  });

  it('sends nothing twice to a client that already has the stored end', async () => {
    // Arrange
    await t.events.append(deployment.id, [logLine(1)]);
    await t.events.appendOnce(deployment.id, [
      {
        key: stateEventKey('success'),
        events: [
          {
            at: '2026-01-01T00:20:00.000Z',
            event: {
              type: 'state_change',
              deployment_id: deployment.id,
              old_state: 'running',
              new_state: 'success',
              message: 'done',
            },
          },
        ],
      },
    ]);
    // Act
    await subscribeViewer(t.deps, 'conn-1', { topic: 'deployment', deploymentId: 'd1', lastEventId: 2 }, echo('d1'));
    // Assess
    expect(t.push.to('conn-1').map((m) => m.type)).toEqual(['subscribed']);
  });

  it('refuses another tenant deployment as not found, and a caller without deployments:read', async () => {
    // Arrange
    t.deployments.put({ ...deployment, id: 'other', shortId: 'o1', tenantId: 't-2' });
    await t.registry.connect(aViewer({ connectionId: 'tenant', tenantId: 't-1' }));
    await t.registry.connect(aViewer({ connectionId: 'blind', permissions: ['targets:read'] }));
    const request = { topic: 'deployment' as const, deploymentId: 'other', lastEventId: 0 };
    // Act
    const elsewhere = subscribeViewer(t.deps, 'tenant', request, echo('other'));
    const blind = subscribeViewer(t.deps, 'blind', request, echo('other'));
    // Assess
    await expect(elsewhere).rejects.toBeInstanceOf(NotFoundError);
    await expect(blind).rejects.toBeInstanceOf(InsufficientPermissionsError);
    expect(t.registry.topicsOf('tenant')).toEqual([]);
    expect(t.registry.topicsOf('blind')).toEqual([]);
  });

  it(`refuses a topic past ${VIEWER_TOPIC_LIMIT} per connection, and an unknown connection`, async () => {
    // Arrange
    for (let i = 0; i < VIEWER_TOPIC_LIMIT; i += 1) {
      const d = t.deployments.put({ ...deployment, id: `d-${i}`, shortId: `s${i}` });
      await subscribeViewer(t.deps, 'conn-1', { topic: 'deployment', deploymentId: d.id, lastEventId: 0 }, echo(d.id));
    }
    // Act
    const again = subscribeViewer(
      t.deps,
      'conn-1',
      { topic: 'deployment', deploymentId: 'd-0', lastEventId: 0 },
      echo('d-0'),
    );
    const past = subscribeViewer(
      t.deps,
      'conn-1',
      { topic: 'deployment', deploymentId: 'd1', lastEventId: 0 },
      echo('d1'),
    );
    const unknown = subscribeViewer(
      t.deps,
      'nobody',
      { topic: 'deployment', deploymentId: 'd1', lastEventId: 0 },
      echo('d1'),
    );
    // Assess
    await expect(again).resolves.toBeUndefined();
    await expect(past).rejects.toBeInstanceOf(ValidationError);
    await expect(unknown).rejects.toBeInstanceOf(InvalidTokenError);
    expect(t.registry.topicsOf('conn-1')).toHaveLength(VIEWER_TOPIC_LIMIT);
  });

  it('closes a connection whose credential was revoked or whose time ran out, instead of subscribing it', async () => {
    // Arrange
    t.invalid.add('sse-1');
    await t.registry.connect(
      aViewer({
        connectionId: 'late',
        credential: { kind: 'session', sseSessionId: 'sse-9', apiKeyId: null },
        expiresAt: '2026-01-01T00:29:00.000Z',
      }),
    );
    const request = { topic: 'deployment' as const, deploymentId: 'd1', lastEventId: 0 };
    // Act
    await subscribeViewer(t.deps, 'conn-1', request, echo('d1'));
    await subscribeViewer(t.deps, 'late', request, echo('d1'));
    // Assess
    expect(t.push.to('conn-1')).toEqual([{ type: 'closing', reason: 'revoked' }]);
    expect(t.push.to('late')).toEqual([{ type: 'closing', reason: 'expired' }]);
    expect(t.push.closed).toEqual(['conn-1', 'late']);
    expect(t.registry.connections.size).toBe(0);
  });

  it('unsubscribes a deployment named by its short id, and answers a ping with its ref', async () => {
    // Arrange
    await subscribeViewer(t.deps, 'conn-1', { topic: 'deployment', deploymentId: 'd1', lastEventId: 0 }, echo('d1'));
    // Act
    await unsubscribeViewer(t.deps, 'conn-1', { topic: 'deployment', deploymentId: 'd1', lastEventId: 0 }, echo('d1'));
    await pingViewer(t.deps, 'conn-1', 'p1');
    // Assess
    expect(t.registry.topicsOf('conn-1')).toEqual([]);
    expect(t.push.to('conn-1').slice(-2)).toEqual([
      { type: 'unsubscribed', ref: 'r1', topic: { topic: 'deployment', deployment_id: 'd1' } },
      { type: 'pong', ref: 'p1' },
    ]);
  });
});

describe('chunkEvents', () => {
  it('cuts at 100 events and at 100 KB, an oversized event going alone', () => {
    // Arrange
    const small = (id: number): ViewerEvent => ({ id, event: 'log', data: { text: 'x' } });
    const big = (id: number): ViewerEvent => ({ id, event: 'log', data: { text: 'y'.repeat(40 * 1024) } });
    // Act
    const byCount = chunkEvents(Array.from({ length: 201 }, (_, i) => small(i + 1)));
    const bySize = chunkEvents([big(1), big(2), big(3), small(4)]);
    const huge = chunkEvents([small(1), { id: 2, event: 'log', data: { text: 'z'.repeat(120 * 1024) } }, small(3)]);
    // Assess
    expect(byCount.map((c) => c.length)).toEqual([100, 100, 1]);
    expect(bySize.map((c) => c.map((e) => e.id))).toEqual([
      [1, 2],
      [3, 4],
    ]);
    expect(huge.map((c) => c.map((e) => e.id))).toEqual([[1], [2], [3]]);
  });
});

describe('closing viewers', () => {
  it('on revocation closes the selected connections whose credential is no longer valid, and only those', async () => {
    // Arrange
    const t = setup();
    await t.registry.connect(aViewer({ connectionId: 'login' }));
    await t.registry.connect(
      aViewer({ connectionId: 'key', credential: { kind: 'api_key', sseSessionId: 'sse-2', apiKeyId: 'k-1' } }),
    );
    await t.registry.connect(aViewer({ connectionId: 'someone', userId: 'u-2' }));
    t.invalid.add('sse-1');
    t.invalid.add('sse-1-of-u2');
    // Act
    const closed = await closeViewers(t.deps, { userId: 'u-1' }, 'revoked');
    const byKey = await closeViewers(t.deps, { userId: 'u-1', apiKeyId: 'k-1' }, 'revoked');
    t.invalid.add('k-1');
    const revokedKey = await closeViewers(t.deps, { userId: 'u-1', apiKeyId: 'k-1' }, 'revoked');
    // Assess
    expect([closed, byKey, revokedKey]).toEqual([1, 0, 1]);
    expect(t.push.to('login')).toEqual([{ type: 'closing', reason: 'revoked' }]);
    expect(t.push.to('key')).toEqual([{ type: 'closing', reason: 'revoked' }]);
    expect([...t.registry.connections.keys()]).toEqual(['someone']);
  });

  it('the sweep closes the connections past their expiry with closing expired', async () => {
    // Arrange
    const t = setup();
    await t.registry.connect(aViewer({ connectionId: 'done', expiresAt: '2026-01-01T00:29:59.000Z' }));
    await t.registry.connect(aViewer({ connectionId: 'live' }));
    t.push.gone.add('done-gone');
    await t.registry.connect(aViewer({ connectionId: 'done-gone', expiresAt: '2026-01-01T00:00:01.000Z' }));
    // Act
    const closed = await expireViewers(t.deps, 10);
    // Assess
    expect(closed).toBe(2);
    expect(t.push.to('done')).toEqual([{ type: 'closing', reason: 'expired' }]);
    expect(t.push.closed).toEqual(['done']);
    expect([...t.registry.connections.keys()]).toEqual(['live']);
  });
});
