// The deployments list's reads against DynamoDB Local: the summaries come from the slim index gsi5 (only what the
// list filters, counts and orders by: no plan), the page is read in full in one batch, and the list answers exactly
// what the full read answered; the read units of the list query stay those of the slim entries; a table that held
// deployments before gsi5 is upgraded without a wrong answer on the way. Prints the time of the list over COUNT (60) deployments with realistic plans, both ways.
import { performance } from 'node:perf_hooks';
import { BatchWriteCommand, DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../../../domain/identity/types.js';
import { listDeployments, STATUS_BUCKETS, type StatusBucket } from '../../../../domain/deployments/queries.js';
import type { Deployment, DeploymentState } from '../../../../domain/deployments/types.js';
import { deploymentView } from '../../../../domain/deployments/views.js';
import { pageOf } from '../../../../domain/shared/pagination.js';
import { DynamoDeploymentRepository, deploymentItem } from '../../../../infra/dynamodb/deployment-repository.js';
import {
  LIST_INDEX_MIGRATION,
  MIGRATION_GRACE_MS,
  readThroughGsi1,
  upgradeListIndex,
  upgradePass,
} from '../../../../infra/dynamodb/deployment-list-index.js';
import { keys } from '../../../../infra/dynamodb/keys.js';
import { createServiceTable, serviceTableFixture } from '../../../support/aws.js';
import { aDeployment, aRealisticPlan } from '../../../fakes/deployments.js';

const { table, client, db } = serviceTableFixture('deployments', { marshallOptions: { removeUndefinedValues: true } });
const deployments = new DynamoDeploymentRepository(db, table);

const COUNT = 60;
const TENANTS = ['aaaaaaaa-0000-4000-8000-00000000000a', 'bbbbbbbb-0000-4000-8000-00000000000b', null];
const STATES: DeploymentState[] = ['running', 'success', 'failed', 'cancelled', 'rolled_back', 'queued'];
const uuid = (n: number) => `d0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

const nth = (n: number): Deployment =>
  aDeployment({
    id: uuid(n),
    shortId: `d${n}`,
    // a few share a creation time: the id orders them
    createdAt: new Date(Date.UTC(2026, 10, 22, 10, 0, Math.floor(n / 2))).toISOString(),
    state: STATES[n % STATES.length]!,
    tenantId: TENANTS[n % TENANTS.length]!,
    environmentId: n % 4 === 0 ? 'eeeeeeee-0000-4000-8000-00000000000a' : null,
    sourceType: n % 5 === 0 ? 'solution' : 'action',
    triggeredBy: n % 7 === 0 ? 'someone-else' : 'c0000000-0000-4000-8000-000000000001',
    plan: aRealisticPlan(n),
  });

const stored = Array.from({ length: COUNT }, (_, i) => nth(i + 1));

const global: Caller = { kind: 'user', userId: 'c1', tenantId: null, roles: ['admin'], permissions: new Set() };
const tenantA: Caller = { ...global, tenantId: TENANTS[0]! };

beforeAll(async () => {
  await createServiceTable(client, table);
  for (let i = 0; i < stored.length; i += 25) {
    const items = stored.slice(i, i + 25).map((d) => ({ PutRequest: { Item: deploymentItem(d) } }));
    await db.send(new BatchWriteCommand({ RequestItems: { [table]: items } }));
  }
  // A table made with gsi5 (as `npm start` leaves it): the upgrade finds nothing missing and marks itself done.
  expect(await upgradeListIndex(db, table)).toBe(0);
});

/** The list as it was before the slim read (listAll, then filter, count and page in memory): the reference. */
const listedFromFullRecords = async (caller: Caller, query: Parameters<typeof listDeployments>[2]) => {
  const matching = (await deployments.listAll())
    .filter((d) => caller.tenantId === null || d.tenantId === caller.tenantId)
    .filter((d) => caller.tenantId !== null || query.tenant_id === undefined || d.tenantId === query.tenant_id)
    .filter((d) => query.environment_id === undefined || d.environmentId === query.environment_id)
    .filter((d) => query.source_type === undefined || d.sourceType === query.source_type)
    .filter((d) => query.triggered_by === undefined || d.triggeredBy === query.triggered_by);
  const inBucket = (bucket: StatusBucket) => (d: Deployment) =>
    (STATUS_BUCKETS[bucket] as readonly DeploymentState[]).includes(d.state);
  const states =
    query.status === undefined
      ? undefined
      : query.status in STATUS_BUCKETS
        ? (STATUS_BUCKETS[query.status as StatusBucket] as readonly DeploymentState[])
        : [query.status as DeploymentState];
  const listed = matching
    .filter((d) => states === undefined || states.includes(d.state))
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));
  const page = pageOf(listed, query);
  const count = (bucket: StatusBucket) => matching.filter(inBucket(bucket)).length;
  return {
    data: page.data.map(deploymentView),
    meta: page.meta,
    status_counts: {
      all: matching.length,
      running: count('running'),
      failed: count('failed'),
      succeeded: count('succeeded'),
      other: count('other'),
    },
  };
};

describe('DynamoDeploymentRepository summaries and page reads', () => {
  it('lists every deployment’s summary without its plan: only what the list filters, counts and orders by', async () => {
    const summaries = await deployments.listSummaries();

    expect(summaries).toHaveLength(COUNT);
    const first = summaries.find((s) => s.id === uuid(12))!;
    const { id, tenantId, state, environmentId, sourceType, triggeredBy, createdAt } = stored[11]!;
    expect(first).toEqual({ id, tenantId, state, environmentId, sourceType, triggeredBy, createdAt });
    for (const summary of summaries) expect(Object.keys(summary).sort()).toEqual(Object.keys(first).sort());
  });

  it('reads the page’s deployments in full, in the page’s order, leaving out a missing one', async () => {
    const ids = [uuid(50), uuid(3), 'd0000000-0000-4000-8000-999999999999', uuid(20)];

    const read = await deployments.getMany(ids);

    const byId = new Map(read.map((d) => [d.id, d]));
    expect(read).toHaveLength(3);
    expect(byId.get(uuid(50))).toEqual(stored[49]);
    expect(byId.get(uuid(20))!.plan.steps).toHaveLength(30);
  });

  it('answers every list query exactly as the full read did, and prints the time both ways', async () => {
    const queries: [Caller, Parameters<typeof listDeployments>[2]][] = [
      [global, { page: 1, limit: 20 }],
      [global, { page: 2, limit: 10, status: 'failed' }],
      [global, { page: 1, limit: 100, tenant_id: TENANTS[1]!, environment_id: 'eeeeeeee-0000-4000-8000-00000000000a' }],
      [tenantA, { page: 1, limit: 25, triggered_by: 'someone-else', tenant_id: TENANTS[1]! }],
    ];
    for (const [caller, query] of queries) {
      const now = await listDeployments({ deployments }, caller, query);
      expect(JSON.stringify(now)).toBe(JSON.stringify(await listedFromFullRecords(caller, query)));
    }

    const median = async (run: () => Promise<unknown>) => {
      const times: number[] = [];
      for (let i = 0; i < 3; i += 1) {
        const start = performance.now();
        await run();
        times.push(performance.now() - start);
      }
      return times.sort((a, b) => a - b)[1]!;
    };
    const query = { page: 1, limit: 20 };
    const before = await median(() => listedFromFullRecords(global, query));
    const after = await median(() => listDeployments({ deployments }, global, query));
    const kb = (records: unknown) => (JSON.stringify(records).length / 1024).toFixed(0);
    const fullKb = kb(await deployments.listAll());
    const slimKb = kb(await deployments.listSummaries());
    console.log(`records sent by the list query: full ${fullKb} KB, summaries ${slimKb} KB`);
    console.log(
      `GET /deployments over ${COUNT} deployments (30-step plans, limit 20), median of 3: ` +
        `full read ${before.toFixed(1)} ms, summaries + page read ${after.toFixed(1)} ms`,
    );
  }, 120_000);
});

/** The read units of every Query sent through a client (ReturnConsumedCapacity added to each), and every command. */
const metered = () => {
  const client = DynamoDBDocumentClient.from(serviceTableFixture('unused').client);
  const meter = { units: 0, queries: 0, commands: [] as string[] };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      meter.commands.push(String(context.commandName));
      const input = args.input as { ReturnConsumedCapacity?: string };
      const isQuery = (args.input as { KeyConditionExpression?: string }).KeyConditionExpression !== undefined;
      if (isQuery) input.ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const used = (result.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity;
      if (isQuery) {
        meter.queries += 1;
        meter.units += used?.CapacityUnits ?? Number.NaN;
      }
      return result;
    },
    { step: 'initialize', name: 'meter' },
  );
  return { client, meter };
};

describe('the slim list index (gsi5)', () => {
  it('reads only slim entries: the list query’s read units do not grow with the plans', async () => {
    const { client: meteredDb, meter } = metered();
    const slim = new DynamoDeploymentRepository(meteredDb, table);

    const summaries = await slim.listSummaries();
    const slimUnits = meter.units;
    await readThroughGsi1(meteredDb, table);
    const fullUnits = meter.units - slimUnits;

    expect(summaries).toHaveLength(COUNT);
    // 60 whole items of ~6 KB each (their steps packed; ~22 KB before): about 45 units; 60 slim entries of ~250
    // bytes: 2 units.
    expect(fullUnits).toBeGreaterThan(30);
    expect(slimUnits).toBeLessThanOrEqual(4);
    console.log(`list query over ${COUNT} deployments: gsi1 projected ${fullUnits} RCU, gsi5 ${slimUnits} RCU`);
  });

  it('upgrades a table that held deployments before gsi5: right answers on the way, done after the grace', async () => {
    const old = serviceTableFixture('deployments-upgrade');
    await createServiceTable(old.client, old.table);
    const repository = new DynamoDeploymentRepository(old.db, old.table);
    const before = stored.slice(0, 12);
    // Written by the previous release: no gsi5 keys (gsi5 was added to the table later); two written since have them.
    const items = before.map((d, i) => {
      const { gsi5pk, gsi5sk, ...item } = deploymentItem(d);
      return i < 10 ? item : { ...item, gsi5pk, gsi5sk };
    });
    await old.db.send(
      new BatchWriteCommand({ RequestItems: { [old.table]: items.map((Item) => ({ PutRequest: { Item } })) } }),
    );
    const onIndex = async () =>
      (
        await old.db.send(
          new QueryCommand({
            TableName: old.table,
            IndexName: 'gsi5',
            KeyConditionExpression: 'gsi5pk = :pk',
            ExpressionAttributeValues: { ':pk': 'DEPLOYMENTS' },
          }),
        )
      ).Items ?? [];
    const marker = async () =>
      (await old.db.send(new GetCommand({ TableName: old.table, Key: keys.migration(LIST_INDEX_MIGRATION) }))).Item;
    expect(await onIndex()).toHaveLength(2);

    const ids = (list: readonly { id: string }[]) => list.map((d) => d.id).sort();
    // The first list call answers every deployment (through gsi1) and adds the ten missing entries.
    expect(ids(await repository.listSummaries())).toEqual(ids(before));
    expect(await onIndex()).toHaveLength(12);
    const { startedAt } = (await marker())!;
    expect((await marker())!['doneAt']).toBeUndefined();
    // A list call within the grace, nothing missing: it reads (the marker, gsi1) and writes nothing.
    const during = metered();
    expect(ids(await new DynamoDeploymentRepository(during.client, old.table).listSummaries())).toEqual(ids(before));
    expect(during.meter.commands).toEqual(['GetItemCommand', 'QueryCommand']);

    // Nothing missing, but within the grace (old code may still write): not done yet.
    const within = new Date(Date.parse(String(startedAt)) + MIGRATION_GRACE_MS - 1000);
    expect((await upgradePass(old.db, old.table, await readThroughGsi1(old.db, old.table), { now: within })).done).toBe(
      false,
    );
    const after = new Date(Date.parse(String(startedAt)) + MIGRATION_GRACE_MS);
    const pass = await upgradePass(old.db, old.table, await readThroughGsi1(old.db, old.table), { now: after });
    expect(pass).toEqual({ missing: 0, indexed: 0, done: true });
    expect((await marker())!['doneAt']).toBe(after.toISOString());

    // Now gsi5 alone: the same summaries, the plan-less entries.
    const { client: meteredDb, meter } = metered();
    const summaries = await new DynamoDeploymentRepository(meteredDb, old.table).listSummaries();
    expect(ids(summaries)).toEqual(ids(before));
    expect(summaries.find((d) => d.id === before[3]!.id)).toEqual(
      (({ id, tenantId, state, environmentId, sourceType, triggeredBy, createdAt }) => ({
        id,
        tenantId,
        state,
        environmentId,
        sourceType,
        triggeredBy,
        createdAt,
      }))(before[3]!),
    );
    expect(meter.units).toBeLessThanOrEqual(1);
  });
});

describe('the list summaries kept current from the change feed (deployment-summaries.ts)', () => {
  it('reads gsi5 once, then only the feed and the deployments written since: another writer’s changes show at once', async () => {
    const fed = serviceTableFixture('deployments-feed', { marshallOptions: { removeUndefinedValues: true } });
    await createServiceTable(fed.client, fed.table);
    const three = stored.slice(0, 3);
    await fed.db.send(
      new BatchWriteCommand({
        RequestItems: { [fed.table]: three.map((d) => ({ PutRequest: { Item: deploymentItem(d) } })) },
      }),
    );
    expect(await upgradeListIndex(fed.db, fed.table)).toBe(0);
    const { client: meteredDb, meter } = metered();
    const reader = new DynamoDeploymentRepository(meteredDb, fed.table);
    // another container's: nothing of it is shared with the reader
    const writer = new DynamoDeploymentRepository(fed.db, fed.table);
    const states = async () => Object.fromEntries((await reader.listSummaries()).map((s) => [s.id, s.state]));

    expect(await states()).toEqual(Object.fromEntries(three.map((d) => [d.id, d.state])));
    const cold = meter.commands.splice(0);
    expect(cold).toContain('QueryCommand');

    const [first] = three;
    expect(await writer.update(first!, { ...first!, state: 'cancelled', revision: first!.revision + 1 })).toBe(true);
    const fourth = nth(COUNT + 1);
    await fed.db.send(
      new BatchWriteCommand({ RequestItems: { [fed.table]: [{ PutRequest: { Item: deploymentItem(fourth) } }] } }),
    );

    const now = await states();
    expect(now[first!.id]).toBe('cancelled');
    expect(now[fourth.id]).toBe(fourth.state);
    expect(Object.keys(now)).toHaveLength(4);
    // one feed query and one batch read of what it listed: no read of every summary
    expect(meter.commands.splice(0)).toEqual(['QueryCommand', 'BatchGetItemCommand']);

    expect(Object.keys(await states())).toHaveLength(4);
    // nothing changed since: the feed query alone
    expect(meter.commands.splice(0)).toEqual(['QueryCommand']);
  });
});
