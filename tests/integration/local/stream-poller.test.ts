// The local stream poller and the resource changes consumer against DynamoDB Local: the table made by the local
// bootstrap from serverless.yml has its stream; a target written through its repository reaches the consumer, which
// pushes it as a change to the viewers of the targets list (a fake push); a write of another item (an event) does not.
import { inject } from 'vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { resourceSources, targetListView } from '../../../domain/streams/resource-sources.js';
import type { ViewerChangesDeps } from '../../../domain/streams/viewer-changes.js';
import type { ViewerMessage } from '../../../domain/streams/viewer-ports.js';
import type { Target } from '../../../domain/targets/types.js';
import { makeHandler } from '../../../functions/changes/resource-changes-consumer.js';
import { DynamoDeploymentEventStore } from '../../../infra/dynamodb/deployment-event-store.js';
import { DynamoTargetRepository } from '../../../infra/dynamodb/target-repository.js';
import { ensureTables } from '../../../local/bootstrap.js';
import { loadServiceDefinition } from '../../../local/service-definition.js';
import { startStreamPoller, type StreamPoller } from '../../../local/stream-poller.js';
import { FakeClock } from '../../fakes/clock.js';
import { FakePendingRequestRepository } from '../../fakes/deployments.js';
import { aViewer, FakeViewerRegistry } from '../../fakes/viewers.js';
import { dynamoClient, uniqueName } from '../../support/aws.js';

const table = uniqueName('stream');
const client = dynamoClient();
const db = DynamoDBDocumentClient.from(client);
const sent: { connectionId: string; message: ViewerMessage }[] = [];
const registry = new FakeViewerRegistry();
let invocations = 0;
let poller: StreamPoller;

const versions = { server: '1.0.0', agentRelease: () => null };
const deps: ViewerChangesDeps = {
  registry,
  push: {
    send: async (connectionId, message) => {
      sent.push({ connectionId, message });
      return 'sent';
    },
  },
  pending: new FakePendingRequestRepository(),
  clock: new FakeClock(),
  warn: () => undefined,
  sources: resourceSources(versions),
  targetView: targetListView(versions),
};

const aTarget = (id: string): Target => ({
  id,
  shortId: `s-${id}`,
  name: `web-${id}`,
  hostname: `${id}.local`,
  os: 'linux',
  arch: 'x64',
  agentVersion: '1.0.0',
  tags: [],
  tenantId: null,
  environmentId: null,
  agentTokenHash: `hash-${id}`,
  lastHeartbeatAt: null,
  createdAt: '2026-11-25T10:00:00.000Z',
  updatedAt: '2026-11-25T10:00:00.000Z',
});

const until = async (done: () => boolean, ms = 5_000): Promise<void> => {
  for (const start = Date.now(); !done() && Date.now() - start < ms;)
    await new Promise((resolve) => setTimeout(resolve, 50));
};

beforeAll(async () => {
  const definition = await loadServiceDefinition();
  await ensureTables(client, definition.tables, () => table);
  const viewer = aViewer({ connectionId: 'watcher', tenantId: null, permissions: ['targets:read'] });
  await registry.connect(viewer);
  await registry.subscribe(viewer, { kind: 'resources', resourceType: 'targets', tenantId: null }, 20);
  const handler = makeHandler(() => deps);
  poller = await startStreamPoller({
    dynamo: client,
    endpoint: inject('dynamoEndpoint'),
    tableName: table,
    functionName: 'resourceChanges',
    handler: async (event) => {
      invocations += 1;
      await handler(event);
    },
    batchSize: 100,
  });
}, 60_000);

afterAll(async () => {
  await poller?.stop();
});

describe('local stream poller + resource changes consumer', () => {
  it('pushes a written target to the viewers of its list, and nothing for an event store write', async () => {
    // Prepare
    const targets = new DynamoTargetRepository(db, table);
    const events = new DynamoDeploymentEventStore(db, table);
    const started = Date.now();
    // Act
    await targets.create(aTarget('t-1'));
    await until(() => sent.length > 0);
    const latency = Date.now() - started;
    await events.append('d-1', [
      {
        at: new Date().toISOString(),
        event: {
          type: 'progress',
          deployment_id: 'd-1',
          progress: 0,
          completed_steps: 0,
          total_steps: 1,
          message: 'x',
        },
      },
    ]);
    const afterEvent = invocations;
    await until(() => invocations > afterEvent, 2_000);
    // Assess
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      connectionId: 'watcher',
      message: {
        type: 'changes',
        resource_type: 'targets',
        changes: [{ event: 'created', data: { id: 't-1', record: { name: 'web-t-1' } } }],
      },
    });
    expect(latency).toBeLessThan(2_000);
    expect(invocations).toBeGreaterThan(afterEvent); // the event's record reached the consumer, which sent nothing
  });
});
