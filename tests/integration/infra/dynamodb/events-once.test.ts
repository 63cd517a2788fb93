// Terminal events once against DynamoDB Local (issue 34): writers in separate "processes" (store instances) racing
// to append the same transition append it once, and the stored times follow the seqs.
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  isTerminalEvent,
  stateEventKey,
  transitionGroups,
  type NewEvent,
} from '../../../../domain/deployments/events.js';
import { DynamoDeploymentEventStore } from '../../../../infra/dynamodb/deployment-event-store.js';
import { createServiceTable, dynamoClient, uniqueName } from '../../../support/aws.js';

const table = uniqueName('events-once');
const client = dynamoClient();
const db = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });

const ended = (id: string, at: string): NewEvent => ({
  at,
  event: {
    type: 'state_change',
    deployment_id: id,
    old_state: 'running',
    new_state: 'failed',
    message: '1 step(s) failed.',
  },
});
const progress = (id: string, at: string): NewEvent => ({
  at,
  event: { type: 'progress', deployment_id: id, progress: 1, completed_steps: 0, total_steps: 1, message: 'x' },
});
const log = (message: string, at: string): NewEvent => ({
  at,
  event: {
    type: 'log',
    log: { timestamp: at, level: 'info', step_id: 's1', target_id: 't1', target_name: null, message, metadata: null },
  },
});

beforeAll(async () => {
  await createServiceTable(client, table);
});

describe('a transition appended by racing writers', () => {
  it('two writers (the pass that wrote the end, the sweep) racing 20 times: one terminal state_change each time', async () => {
    for (let round = 0; round < 20; round += 1) {
      // Prepare: two processes, a log line already stored
      const id = `d-race-${round}`;
      const pass = new DynamoDeploymentEventStore(db, table);
      const sweep = new DynamoDeploymentEventStore(db, table);
      await pass.append(id, [log('line', '2026-11-22T10:00:00.000Z')]);
      // Act: the pass publishes its events (later clock); the sweep settles the outbox entry (dated at the end)
      await Promise.all([
        pass.appendOnce(
          id,
          transitionGroups(3, [progress(id, '2026-11-22T10:00:01.125Z'), ended(id, '2026-11-22T10:00:01.125Z')]),
        ),
        sweep.appendOnce(id, [{ key: stateEventKey('failed'), events: [ended(id, '2026-11-22T10:00:01.000Z')] }]),
        sweep.appendOnce(id, [{ key: stateEventKey('failed'), events: [ended(id, '2026-11-22T10:00:01.000Z')] }]),
      ]);
      // Assess
      const events = await pass.after(id, 0, 100);
      expect(events.filter((e) => isTerminalEvent(e.event))).toHaveLength(1);
      expect(events.filter((e) => e.event.type === 'progress')).toHaveLength(1);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      for (let i = 1; i < events.length; i += 1) expect(events[i]!.at >= events[i - 1]!.at).toBe(true);
    }
  });

  it('an event dated before the last stored one is stored at that time (seq order is time order)', async () => {
    // Prepare
    const store = new DynamoDeploymentEventStore(db, table);
    await store.append('d-time', [log('late clock', '2026-11-22T10:00:05.000Z')]);
    // Act
    const [keyed] = await store.appendOnce('d-time', [
      { key: stateEventKey('failed'), events: [ended('d-time', '2026-11-22T10:00:04.875Z')] },
    ]);
    const [plain] = await store.append('d-time', [log('older', '2026-11-22T10:00:01.000Z')]);
    // Assess
    expect(keyed?.at).toBe('2026-11-22T10:00:05.000Z');
    expect(plain?.at).toBe('2026-11-22T10:00:05.000Z');
    expect(plain?.event).toMatchObject({ log: { timestamp: '2026-11-22T10:00:05.000Z', message: 'older' } });
    expect((await store.after('d-time', 0, 10)).map((e) => e.at)).toEqual([
      '2026-11-22T10:00:05.000Z',
      '2026-11-22T10:00:05.000Z',
      '2026-11-22T10:00:05.000Z',
    ]);
  });
});
