// Benchmark (figures printed, nothing asserted): what one GET /deployments costs (the list query's read units, the
// page's read units, the time of the whole list read) on DynamoDB Local alone, as the number of stored deployments
// with big plans (30 steps, 3 pinned scripts, a dozen variables: about 22 KB each) grows. Run with
// `npm run bench:list [-- 300 1000]`. Before: the gsi1 query projected to the summary (DynamoDB reads each whole
// item before projecting it); then the slim index gsi5 read by a cold container (docs/decisions.md, "The deployments
// list reads a slim index"); then a warm container, whose summaries are kept current from the change feed.
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Caller } from '../../domain/identity/types.js';
import { listDeployments } from '../../domain/deployments/queries.js';
import { readThroughGsi1, upgradeListIndex } from '../../infra/dynamodb/deployment-list-index.js';
import { DynamoDeploymentRepository, deploymentItem } from '../../infra/dynamodb/deployment-repository.js';
import { ensureTables } from '../../local/bootstrap.js';
import { LOCAL_CREDENTIALS, startDynamo } from '../../local/emulators.js';
import { freePort } from '../../local/ports.js';
import { loadServiceDefinition } from '../../local/service-definition.js';
import { aDeployment, aRealisticPlan } from '../fakes/deployments.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const SIZES = process.argv.slice(2).map(Number);
const COUNTS = SIZES.length > 0 ? SIZES : [300, 1000];
const RUNS = 5;
const global: Caller = { kind: 'user', userId: 'c1', tenantId: null, roles: ['admin'], permissions: new Set() };

/** A document client that asks every read for its consumed capacity and adds it up. */
const metered = (client: DynamoDBClient) => {
  const db = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  const meter = { query: 0, batch: 0, pages: 0 };
  db.middlewareStack.add(
    (next) => async (args) => {
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const used = (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
      const units = (Array.isArray(used) ? used : [used]).reduce(
        (sum: number, c) => sum + Number((c as { CapacityUnits?: number } | undefined)?.CapacityUnits ?? 0),
        0,
      );
      if ('KeyConditionExpression' in (args.input as object)) {
        meter.query += units;
        meter.pages += 1;
      } else if ('RequestItems' in (args.input as object)) meter.batch += units;
      return result;
    },
    { step: 'initialize', name: 'meter' },
  );
  return { db, meter };
};

/** The list as it read before gsi5: the gsi1 query projected to the summary, then the same page read. */
class BeforeRepository extends DynamoDeploymentRepository {
  constructor(
    private readonly raw: DynamoDBDocumentClient,
    private readonly table: string,
  ) {
    super(raw, table);
  }
  override async listSummaries() {
    return (await readThroughGsi1(this.raw, this.table)).map((item) => ({
      id: String(item['id']),
      tenantId: (item['tenantId'] as string | null) ?? null,
      state: item['state'] as never,
      environmentId: (item['environmentId'] as string | null) ?? null,
      sourceType: item['sourceType'] as never,
      triggeredBy: String(item['triggeredBy']),
      createdAt: String(item['createdAt']),
    }));
  }
}

const port = await freePort();
const dynamo = await startDynamo({ port });
const client = new DynamoDBClient({ endpoint: dynamo.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
try {
  const definition = await loadServiceDefinition();
  console.log(
    `GET /deployments (limit 20), ${RUNS} calls each, DynamoDB Local; machine: ${cpus().length} cores, ` +
      `load ${loadavg()[0]!.toFixed(1)}`,
  );
  const { db, meter } = metered(client);
  for (const count of COUNTS) {
    const table = `bench-list-${count}-${randomUUID().slice(0, 8)}`;
    await ensureTables(client, definition.tables, () => table);
    const items = Array.from({ length: count }, (_, n) =>
      deploymentItem(
        aDeployment({
          id: randomUUID(),
          shortId: `d${n}`,
          state: n % 3 === 0 ? 'failed' : 'success',
          createdAt: new Date(Date.UTC(2026, 10, 1) + n * 1000).toISOString(),
          plan: aRealisticPlan(n),
        }),
      ),
    );
    const kb = items.reduce((sum, item) => sum + JSON.stringify(item).length, 0) / 1024 / count;
    for (let i = 0; i < items.length; i += 25)
      await db.send(
        new BatchWriteCommand({
          RequestItems: { [table]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) },
        }),
      );
    await upgradeListIndex(db, table);
    const warm = new DynamoDeploymentRepository(db, table);
    for (const [label, repositoryFor] of [
      ['before (gsi1 projected)       ', () => new BeforeRepository(db, table)],
      ['gsi5 slim, cold container     ', () => new DynamoDeploymentRepository(db, table)],
      ['gsi5 + change feed, warm      ', () => warm],
    ] as const) {
      await listDeployments({ deployments: repositoryFor() }, global, { page: 1, limit: 20 }); // warm
      meter.query = 0;
      meter.batch = 0;
      meter.pages = 0;
      const times: number[] = [];
      for (let run = 0; run < RUNS; run += 1) {
        const repository = repositoryFor();
        const started = performance.now();
        await listDeployments({ deployments: repository }, global, { page: 1, limit: 20 });
        times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      const used = { ...meter };
      const queryTimes: number[] = [];
      for (let run = 0; run < RUNS; run += 1) {
        const repository = repositoryFor();
        const started = performance.now();
        await repository.listSummaries();
        queryTimes.push(performance.now() - started);
      }
      queryTimes.sort((a, b) => a - b);
      console.log(
        `  ${String(count).padStart(5)} deployments (~${kb.toFixed(0)} KB each), ${label}: ` +
          `list queries ${(used.query / RUNS).toFixed(1)} RCU in ${used.pages / RUNS} page(s) + batch reads ` +
          `${(used.batch / RUNS).toFixed(1)} RCU per call, ` +
          `median ${times[Math.floor(RUNS / 2)]!.toFixed(0)} ms (min ${times[0]!.toFixed(0)}, max ${times.at(-1)!.toFixed(0)}), ` +
          `of which the summaries ${queryTimes[Math.floor(RUNS / 2)]!.toFixed(0)} ms`,
      );
    }
  }
} finally {
  client.destroy();
  await dynamo.stop();
}
