// What the push at the write adds to a writer nobody watches, against DynamoDB Local: the event store decorated with
// the viewer publisher (the real registry, no subscribers, a push that must never be called) next to the plain
// store, the same appends one after the other. The subscriber list is cached per process for a second (also when
// empty), so the decorated writer makes at most one registry query a second; the time it adds is printed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '../../../../domain/deployments/events.js';
import type { ViewerTopic } from '../../../../domain/streams/viewer-ports.js';
import { publishingEvents, viewerPublisher } from '../../../../domain/streams/viewer-publish.js';
import { DynamoDeploymentEventStore } from '../../../../infra/dynamodb/deployment-event-store.js';
import { DynamoViewerRegistry } from '../../../../infra/dynamodb/viewer-repository.js';
import { systemClock } from '../../../../infra/system/clock.js';
import { createServiceTable, serviceTableFixture } from '../../../support/aws.js';

const { table, client, db } = serviceTableFixture('viewer-push-cost');
const APPENDS = 150;

const line = (i: number): NewEvent => ({
  at: new Date().toISOString(),
  event: {
    type: 'log',
    log: {
      timestamp: new Date().toISOString(),
      level: 'info',
      step_id: null,
      target_id: null,
      target_name: null,
      message: `line ${i}`,
      metadata: null,
    },
  },
});

beforeAll(async () => {
  await createServiceTable(client, table);
});

afterAll(() => {
  client.destroy();
});

describe('the push at the write, nobody watching', () => {
  it('costs at most one subscriber query a second and adds next to no time to an append', async () => {
    // Prepare
    const registry = new DynamoViewerRegistry(db, table);
    let queries = 0;
    let sends = 0;
    const counted = {
      subscribers: (topic: ViewerTopic) => {
        queries += 1;
        return registry.subscribers(topic);
      },
      disconnect: (id: string) => registry.disconnect(id),
    };
    const plain = new DynamoDeploymentEventStore(db, table);
    const decorated = publishingEvents(
      new DynamoDeploymentEventStore(db, table),
      viewerPublisher({
        registry: counted,
        push: { send: async () => ((sends += 1), 'sent' as const) },
        clock: systemClock,
        warn: () => undefined,
        wait: (ms, signal) =>
          new Promise((resolve, reject) => {
            const timer = setTimeout(resolve, ms);
            signal.addEventListener('abort', () => (clearTimeout(timer), reject(new Error('aborted'))));
          }),
      }),
    );
    const time = async (store: typeof plain | typeof decorated, deploymentId: string) => {
      const started = performance.now();
      for (let i = 0; i < APPENDS; i += 1) await store.append(deploymentId, [line(i)]);
      return (performance.now() - started) / APPENDS;
    };
    await time(plain, 'warm-up'); // the client's connections, the JIT
    // Act
    const plainMs = await time(plain, 'plain');
    const started = Date.now();
    const decoratedMs = await time(decorated, 'decorated');
    const seconds = (Date.now() - started) / 1000;
    // Assess
    console.log(
      `append: plain ${plainMs.toFixed(2)} ms, decorated ${decoratedMs.toFixed(2)} ms ` +
        `(+${(decoratedMs - plainMs).toFixed(2)} ms); ${queries} subscriber queries in ${seconds.toFixed(1)} s ` +
        `for ${APPENDS} appends`,
    );
    expect(sends).toBe(0);
    expect(queries).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
    expect(queries).toBeGreaterThanOrEqual(1);
  });
});
