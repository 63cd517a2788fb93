import { DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '../../../../domain/deployments/events.js';
import {
  DynamoDeploymentEventStore,
  groupBatches,
  mergeBatch,
  transactionBatches,
} from '../../../../infra/dynamodb/deployment-event-store.js';
import { queryAll } from '../../../../infra/dynamodb/query-all.js';
import { createServiceTable, dynamoClient, uniqueName } from '../../../support/aws.js';

const table = uniqueName('events');
const client = dynamoClient();
const db = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
const store = new DynamoDeploymentEventStore(db, table);

const logEvent = (message: string, at = '2026-11-22T10:00:00.000Z'): NewEvent => ({
  at,
  event: {
    type: 'log',
    log: {
      timestamp: at,
      level: 'info',
      step_id: 's1',
      target_id: 't1',
      target_name: 'local-1',
      message,
      metadata: { stream: 'stdout' },
    },
  },
});

beforeAll(async () => {
  await createServiceTable(client, table);
});

describe('DynamoDeploymentEventStore', () => {
  it('numbers events 1, 2, 3, ... and reads them back in order, after a seq and by page', async () => {
    // Prepare
    const first = await store.append('d-order', [logEvent('one'), logEvent('two')]);
    // Act
    const second = await store.append('d-order', [
      {
        at: '2026-11-22T10:00:01.000Z',
        event: {
          type: 'state_change',
          deployment_id: 'd-order',
          old_state: 'running',
          new_state: 'success',
          message: 'done',
        },
      },
    ]);
    // Assess
    expect(first.map((e) => e.seq)).toEqual([1, 2]);
    expect(second.map((e) => e.seq)).toEqual([3]);
    expect((await store.after('d-order', 0, 10)).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(await store.after('d-order', 1, 1)).toEqual([
      { seq: 2, at: '2026-11-22T10:00:00.000Z', event: logEvent('two').event },
    ]);
    expect((await store.page('d-order', 1, 5)).map((e) => e.seq)).toEqual([2, 3]);
    expect(await store.after('d-order', 3, 10)).toEqual([]);
    expect((await store.last('d-order'))?.event).toMatchObject({ type: 'state_change', new_state: 'success' });
    expect(await store.last('d-none')).toBeUndefined();
    expect(await store.after('d-other', 0, 10)).toEqual([]);
  });

  it('gives 10 concurrent appenders x 20 events the seqs 1..200, contiguous, each event exactly once', async () => {
    // Act
    const writers = Array.from({ length: 10 }, async (_, w) => {
      const got: number[] = [];
      for (let i = 0; i < 20; i += 1)
        got.push(...(await store.append('d-race', [logEvent(`w${w}-e${i}`)])).map((e) => e.seq));
      return got;
    });
    const returned = (await Promise.all(writers)).flat();
    // Assess
    const stored = await store.after('d-race', 0, 1000);
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect([...returned].sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    const messages = stored.map((e) => (e.event.type === 'log' ? e.event.log.message : ''));
    expect(new Set(messages).size).toBe(200);
    for (let w = 0; w < 10; w += 1) {
      const mine = messages.filter((m) => m.startsWith(`w${w}-`));
      expect(mine).toEqual(Array.from({ length: 20 }, (_, i) => `w${w}-e${i}`)); // each writer's order kept
    }
  }, 90_000);

  it('commits concurrent keyed appends of one process together, each group once, contiguous beside another process', async () => {
    // Prepare: two stores (two containers), one counting its transactions
    const countingClient = dynamoClient();
    let transactions = 0;
    countingClient.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'TransactWriteItemsCommand') transactions += 1;
        return next(args);
      },
      { step: 'initialize' },
    );
    const batching = new DynamoDeploymentEventStore(
      DynamoDBDocumentClient.from(countingClient, { marshallOptions: { removeUndefinedValues: true } }),
      table,
    );
    const group = (key: string) => ({ key, events: [logEvent(key), logEvent(`${key}/2`)] });
    // Act: 60 writers at once in the batching process (every 10th repeats an earlier key, as a retried chunk does),
    // 20 in the other
    const calls = Array.from({ length: 60 }, (_, i) =>
      batching.appendOnce('d-group', [group(i % 10 === 9 ? `k${i - 1}` : `k${i}`)]),
    );
    const others = Array.from({ length: 20 }, (_, i) => store.appendOnce('d-group', [group(`o${i}`)]));
    const returned = await Promise.all([...calls, ...others]);
    // Assess: 74 groups of 2 events, once each, seqs contiguous; far fewer transactions than calls
    const stored = await store.after('d-group', 0, 1000);
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 148 }, (_, i) => i + 1));
    const messages = stored.map((e) => (e.event.type === 'log' ? e.event.log.message : ''));
    expect(new Set(messages).size).toBe(148);
    for (const key of [...Array.from({ length: 60 }, (_, i) => `k${i}`).filter((_, i) => i % 10 !== 9)])
      expect(messages.indexOf(`${key}/2`)).toBe(messages.indexOf(key) + 1);
    expect(
      returned
        .flat()
        .map((e) => e.seq)
        .sort((a, b) => a - b),
    ).toEqual(stored.map((e) => e.seq));
    expect(returned.filter((r) => r.length === 0)).toHaveLength(6); // the repeated keys: nothing new
    expect(transactions).toBeLessThan(20);
  });

  it('appends keyed groups nobody races in few calls: the head read with the markers, then the head it wrote guessed', async () => {
    const countingClient = dynamoClient();
    const sent: string[] = [];
    countingClient.middlewareStack.add(
      (next, context) => async (args) => {
        sent.push(String(context.commandName));
        return next(args);
      },
      { step: 'initialize' },
    );
    const counted = new DynamoDeploymentEventStore(
      DynamoDBDocumentClient.from(countingClient, { marshallOptions: { removeUndefinedValues: true } }),
      table,
    );
    const group = (key: string) => [{ key, events: [logEvent(`${key} one`), logEvent(`${key} two`)] }];
    await store.append('d-few-calls', [logEvent('before')]);

    // the first: one read (head and markers), one transaction
    expect((await counted.appendOnce('d-few-calls', group('c1/1'))).map((e) => e.seq)).toEqual([2, 3]);
    expect(sent.splice(0)).toEqual(['BatchGetItemCommand', 'TransactWriteItemsCommand']);
    // the next chunk: the transaction alone, from the head the first one wrote
    expect((await counted.appendOnce('d-few-calls', group('c1/2'))).map((e) => e.seq)).toEqual([4, 5]);
    expect(sent.splice(0)).toEqual(['TransactWriteItemsCommand']);
    // another writer moves the head: the guess is refused, then the usual read and transaction
    await store.append('d-few-calls', [logEvent('engine')]);
    expect((await counted.appendOnce('d-few-calls', group('c1/3'))).map((e) => e.seq)).toEqual([7, 8]);
    expect(sent.splice(0)).toEqual(['TransactWriteItemsCommand', 'BatchGetItemCommand', 'TransactWriteItemsCommand']);
    // a retried chunk (its marker is there): read, nothing written (no guessing for a while after a miss)
    expect(await counted.appendOnce('d-few-calls', group('c1/2'))).toEqual([]);
    expect(sent.splice(0)).toEqual(['BatchGetItemCommand']);
    expect(counted.stats.missedGuesses).toBe(1);
    const messages = (await store.after('d-few-calls', 0, 20)).map((e) =>
      e.event.type === 'log' ? e.event.log.message : '',
    );
    expect(messages).toEqual([
      'before',
      'c1/1 one',
      'c1/1 two',
      'c1/2 one',
      'c1/2 two',
      'engine',
      'c1/3 one',
      'c1/3 two',
    ]);
  });

  it('merges the groups of 40 targets written by 4 containers at once: each once, in order per target, contiguous', async () => {
    // Prepare: 4 stores (4 containers), 10 targets each; every target posts 5 chunks one after another (as an
    // agent does), and every third chunk is posted twice at once (a retry racing the original)
    const containers = Array.from({ length: 4 }, () => new DynamoDeploymentEventStore(db, table));
    const chunk = (target: string, n: number) => ({
      key: `${target}#${n}`,
      events: [logEvent(`${target} line ${n}a`), logEvent(`${target} line ${n}b`)],
    });
    // Act
    const returned = await Promise.all(
      Array.from({ length: 40 }, async (_, t) => {
        const store = containers[t % 4]!;
        const got: number[] = [];
        for (let n = 0; n < 5; n += 1) {
          const calls = [store.appendOnce('d-shards', [chunk(`t${t}`, n)])];
          if (n % 3 === 2) calls.push(containers[(t + 1) % 4]!.appendOnce('d-shards', [chunk(`t${t}`, n)]));
          for (const events of await Promise.all(calls)) got.push(...events.map((e) => e.seq));
        }
        return got;
      }),
    );
    // Assess: 200 chunks of 2 lines, each once; seqs 1..400; each target's lines in the order it wrote them
    const stored = await store.after('d-shards', 0, 2000);
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 400 }, (_, i) => i + 1));
    const messages = stored.map((e) => (e.event.type === 'log' ? e.event.log.message : ''));
    expect(new Set(messages).size).toBe(400);
    for (let t = 0; t < 40; t += 1)
      expect(messages.filter((m) => m.startsWith(`t${t} `))).toEqual(
        Array.from({ length: 5 }, (_, n) => [`t${t} line ${n}a`, `t${t} line ${n}b`]).flat(),
      );
    // every seq was answered to exactly one call (a duplicate's call answers nothing)
    expect(returned.flat().sort((a, b) => a - b)).toEqual(stored.map((e) => e.seq));
    // nothing is left parked
    const { Items: left = [] } = await db.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': 'DEPLOYMENTEVENTS#d-shards', ':p': 'PARKED#' },
        ConsistentRead: true,
      }),
    );
    expect(left).toEqual([]);
    // writers that lost the race parked their chunks and one merge carried several of them
    const stats = containers.map((c) => c.stats);
    const parked = stats.reduce((n, s) => n + s.parked, 0);
    const merges = stats.reduce((n, s) => n + s.merges, 0);
    expect(parked).toBeGreaterThan(0);
    expect(merges).toBeLessThan(parked);
  }, 90_000);

  it('merges a group a dead writer parked once, and drops it when a retry already appended it', async () => {
    // Prepare: a writer parked two groups and died before merging them; one was then appended by a retry
    const park = (key: string, message: string, n: number) =>
      db.send(
        new PutCommand({
          TableName: table,
          Item: {
            pk: 'DEPLOYMENTEVENTS#d-dead',
            sk: `PARKED#0000000000001#00000${n}#${key}`,
            type: 'deployment_event_parked',
            groupKey: key,
            events: JSON.stringify([{ at: '2026-11-22T10:00:00.000Z', body: JSON.stringify(logEvent(message).event) }]),
          },
        }),
      );
    await park('gone#1', 'orphan', 1);
    await park('retried#1', 'retried', 2);
    await store.appendOnce('d-dead', [{ key: 'retried#1', events: [logEvent('retried')] }]);
    // Act
    await store.mergeParked('d-dead');
    // Assess
    const messages = (await store.after('d-dead', 0, 100)).map((e) =>
      e.event.type === 'log' ? e.event.log.message : '',
    );
    expect(messages).toEqual(['retried', 'orphan']);
    await store.mergeParked('d-dead'); // nothing left: a no-op
    expect(await store.after('d-dead', 0, 100)).toHaveLength(2);
  });

  it('splits an append of more than 99 events into transactions and keeps their order', async () => {
    // Act
    const stored = await store.append(
      'd-big',
      Array.from({ length: 250 }, (_, i) => logEvent(`line ${i}`)),
    );
    // Assess
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
    const read = await store.after('d-big', 0, 1000);
    expect(read.map((e) => (e.event.type === 'log' ? e.event.log.message : ''))).toEqual(
      Array.from({ length: 250 }, (_, i) => `line ${i}`),
    );
    expect((await store.page('d-big', 240, 100)).map((e) => e.seq)).toEqual([
      241, 242, 243, 244, 245, 246, 247, 248, 249, 250,
    ]);
  });

  it('packs 5,000 lines into 50 items, reads from any seq inside a pack, and still reads single-event items', async () => {
    // Prepare: an item of one event as written before packing, then a keyed group of 5,000 lines
    await db.send(
      new PutCommand({
        TableName: table,
        Item: {
          pk: 'DEPLOYMENTEVENTS#d-packed',
          sk: 'EVENT#0000000001',
          type: 'deployment_event',
          seq: 1,
          at: '2026-11-22T10:00:00.000Z',
          body: JSON.stringify(logEvent('old').event),
        },
      }),
    );
    await db.send(new PutCommand({ TableName: table, Item: { pk: 'DEPLOYMENTEVENTS#d-packed', sk: 'HEAD', seq: 1 } }));
    const lines = Array.from({ length: 5_000 }, (_, i) => logEvent(`line ${i}`));
    // Act
    const stored = await store.appendOnce('d-packed', [{ key: 'big', events: lines }]);
    // Assess
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 5_000 }, (_, i) => i + 2));
    const items = await queryAll(db, {
      TableName: table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :e)',
      ExpressionAttributeValues: { ':pk': 'DEPLOYMENTEVENTS#d-packed', ':e': 'EVENT#' },
    });
    expect(items).toHaveLength(51);
    const message = (e: { event: NewEvent['event'] }) => (e.event.type === 'log' ? e.event.log.message : '');
    expect((await store.after('d-packed', 0, 3)).map(message)).toEqual(['old', 'line 0', 'line 1']);
    expect((await store.after('d-packed', 150, 3)).map((e) => [e.seq, message(e)])).toEqual([
      [151, 'line 149'],
      [152, 'line 150'],
      [153, 'line 151'],
    ]);
    expect((await store.page('d-packed', 4_990, 100)).map((e) => e.seq)).toEqual(
      Array.from({ length: 11 }, (_, i) => 4_991 + i),
    );
    const all = await store.after('d-packed', 0, 10_000);
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 5_001 }, (_, i) => i + 1));
    expect(message((await store.last('d-packed'))!)).toBe('line 4999');
    expect(await store.after('d-packed', 5_001, 10)).toEqual([]);
  });

  it('cuts over-long outputs to their tail', async () => {
    const output = `${'x'.repeat(100_000)}THE END`;
    const [stored] = await store.append('d-long', [
      {
        at: '2026-11-22T10:00:00.000Z',
        event: { type: 'step_update', step_id: 's1', state: 'failed', exit_code: 1, error_message: null, output },
      },
    ]);
    const read = (await store.after('d-long', 0, 1))[0]!;
    expect(read).toEqual(stored);
    expect(read.event.type === 'step_update' && read.event.output?.endsWith('THE END')).toBe(true);
    expect(read.event.type === 'step_update' && read.event.output!.length).toBeLessThanOrEqual(64 * 1024);
  });
});

describe('mergeBatch', () => {
  const g = (key: string, events = 1, bytes = 50) => ({
    key,
    sizes: Array.from({ length: events }, () => bytes),
    size: 100 + events * bytes,
  });
  it('takes parked groups in order up to 100 items, their events packed together; a duplicate or a marked key only deleted', () => {
    expect(mergeBatch([g('a'), g('b'), g('a'), g('c')], new Set(['c']))).toEqual([
      { index: 0, append: true },
      { index: 1, append: true },
      { index: 2, append: false },
      { index: 3, append: false },
    ]);
    // 3 x 40 small events share 2 packs: head + 4 x (delete + marker) + 2 packs = 11 items
    expect(mergeBatch([g('a', 40), g('b', 40), g('c', 40), g('d', 1)], new Set())).toHaveLength(4);
    // 60 one-line groups: head + 49 x (delete + marker) + 1 pack = 100 items; a 50th would pass 100
    expect(
      mergeBatch(
        Array.from({ length: 60 }, (_, i) => g(`k${i}`)),
        new Set(),
      ),
    ).toHaveLength(49);
    expect(mergeBatch([{ key: 'x', sizes: [1], size: 5_000_000 }], new Set())).toEqual([{ index: 0, append: true }]);
  });
});

describe('groupBatches', () => {
  const g = (events: number, bytes = 50) => ({
    sizes: Array.from({ length: events }, () => bytes),
    size: 100 + events * bytes,
  });
  it('cuts keyed groups at 100 items (a marker each, their events packed together) and at about 3 MB', () => {
    // head + 98 markers + 1 shared pack = 100 items (two items a group before packs were shared: 49)
    expect(groupBatches(Array.from({ length: 150 }, () => g(1))).map((b) => b.length)).toEqual([98, 52]);
    expect(groupBatches([g(250), g(250)]).map((b) => b.length)).toEqual([2]);
    expect(groupBatches([g(10, 100_000), g(10, 100_000), g(10, 100_000)]).map((b) => b.length)).toEqual([2, 1]);
  });
});

describe('transactionBatches', () => {
  it('cuts at 99 events and at about 3 MB', () => {
    expect(transactionBatches(Array.from({ length: 200 }, () => ({ size: 10 }))).map((b) => b.length)).toEqual([
      99, 99, 2,
    ]);
    expect(transactionBatches(Array.from({ length: 5 }, () => ({ size: 1_000_000 }))).map((b) => b.length)).toEqual([
      3, 2,
    ]);
  });
});
