// The deployments list's slim index (gsi5, resources.yml): every deployment item carries `gsi5pk/gsi5sk`
// (keys.deploymentsList, written by `deploymentItem` on every put: create, state changes, cancel, redeploy, sweep),
// and the index projects only what GET /deployments filters, counts and orders by. A list reads about 200 bytes per
// deployment there, where the gsi1 query read each whole item (plan included) before projecting it.
//
// The upgrade of a table that held deployments before gsi5 existed: their items have no gsi5 keys, so the index
// (which DynamoDB backfills itself when it is added) does not hold them. Until a marker item says the upgrade is done,
// the list reads gsi1 as before (same answers, old cost) and gives the entries it finds missing their keys, at most
// BACKFILL_PER_CALL a call. The marker is set by a pass that finds none missing at least MIGRATION_GRACE_MS after the
// first pass: longer than any function of the previous release can still run (15 min), so no deployment written by
// old code (without the keys) can appear after it. `npm start` runs the whole upgrade at start (nothing older runs).
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DeploymentSummary } from '../../domain/deployments/ports.js';
import { conditionally } from './conditional.js';
import { keys, partitions } from './keys.js';
import { queryAll } from './query-all.js';
import type { Item } from './records.js';
import { eachLimited } from '../../domain/shared/concurrency.js';

/** What gsi5 projects besides its keys (resources.yml): the list's summary of a deployment. */
export const DEPLOYMENT_LIST_ATTRIBUTES = [
  'id',
  'tenantId',
  'state',
  'environmentId',
  'sourceType',
  'triggeredBy',
  'createdAt',
] as const satisfies readonly (keyof DeploymentSummary)[];

export const LIST_INDEX_MIGRATION = 'deployments-list-index';
/** Lambda's longest run: after it, no function of the release before gsi5 can still write a deployment. */
export const MIGRATION_GRACE_MS = 15 * 60_000;
/** Entries one list call adds while the upgrade runs (each one UpdateItem, CONCURRENCY at a time). */
export const BACKFILL_PER_CALL = 100;
const CONCURRENCY = 10;

/** Tables whose upgrade is done, per container: once done it stays done, so the marker is read once. */
const upgraded = new Set<string>();
/**
 * When each table's upgrade started, as its marker says, per container: a list call during the upgrade writes neither
 * the marker again nor, within the grace, a "done" that its condition would refuse (a refused write is paid too).
 */
const started = new Map<string, string>();

/** True when the upgrade is done: the list may read gsi5 alone. */
export const listIndexReady = async (db: DynamoDBDocumentClient, table: string): Promise<boolean> => {
  if (upgraded.has(table)) return true;
  const marker = await db.send(new GetCommand({ TableName: table, Key: keys.migration(LIST_INDEX_MIGRATION) }));
  if (typeof marker.Item?.['startedAt'] === 'string') started.set(table, marker.Item['startedAt']);
  if (typeof marker.Item?.['doneAt'] !== 'string') return false;
  upgraded.add(table);
  return true;
};

/** Every deployment read on gsi1, projected to the summary plus whether it has its gsi5 entry (reads whole items). */
export const readThroughGsi1 = async (db: DynamoDBDocumentClient, table: string): Promise<Item[]> => {
  const names = [...DEPLOYMENT_LIST_ATTRIBUTES, 'gsi5pk'];
  return queryAll(db, {
    TableName: table,
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ProjectionExpression: names.map((name) => `#${name}`).join(', '),
    ExpressionAttributeNames: Object.fromEntries(names.map((name) => [`#${name}`, name])),
    ExpressionAttributeValues: { ':pk': partitions.deployments },
  });
};

const addEntry = (db: DynamoDBDocumentClient, table: string, item: Item) => {
  const id = String(item['id']);
  const entry = keys.deploymentsList(String(item['createdAt']), id);
  // Not a change of the deployment: no revision, no change-feed time; a deployment written since has its own keys.
  return conditionally(
    db.send(
      new UpdateCommand({
        TableName: table,
        Key: keys.deployment(id),
        UpdateExpression: 'SET gsi5pk = :pk, gsi5sk = :sk',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(gsi5pk)',
        ExpressionAttributeValues: { ':pk': entry.gsi5pk, ':sk': entry.gsi5sk },
      }),
    ),
  );
};

export interface UpgradePass {
  /** Deployments found without their entry, entries added, and whether the upgrade is now done. */
  readonly missing: number;
  readonly indexed: number;
  readonly done: boolean;
}

/**
 * One pass of the upgrade over what `readThroughGsi1` answered: adds at most `limit` missing entries; with none
 * missing, marks the upgrade done when the first pass is at least `graceMs` old (the first pass records its time).
 */
export const upgradePass = async (
  db: DynamoDBDocumentClient,
  table: string,
  read: readonly Item[],
  options: { readonly now: Date; readonly graceMs?: number; readonly limit?: number },
): Promise<UpgradePass> => {
  const marker = keys.migration(LIST_INDEX_MIGRATION);
  if (!started.has(table)) {
    const put = await conditionally(
      db.send(
        new PutCommand({
          TableName: table,
          Item: { ...marker, type: 'migration', startedAt: options.now.toISOString() },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
    // Another container's marker (put refused) holds an earlier time: the "done" below stays conditional on it.
    if (put) started.set(table, options.now.toISOString());
  }
  const missing = read.filter((item) => item['gsi5pk'] === undefined);
  const todo = missing.slice(0, options.limit ?? missing.length);
  let indexed = 0;
  await eachLimited(todo, CONCURRENCY, async (item) => {
    if (await addEntry(db, table, item)) indexed += 1;
  });
  if (missing.length > 0) return { missing: missing.length, indexed, done: false };
  const cutoff = new Date(options.now.getTime() - (options.graceMs ?? MIGRATION_GRACE_MS)).toISOString();
  if ((started.get(table) ?? '') > cutoff) return { missing: 0, indexed, done: false };
  const done = await conditionally(
    db.send(
      new UpdateCommand({
        TableName: table,
        Key: marker,
        UpdateExpression: 'SET doneAt = if_not_exists(doneAt, :now)',
        ConditionExpression: 'startedAt <= :cutoff',
        ExpressionAttributeValues: { ':now': options.now.toISOString(), ':cutoff': cutoff },
      }),
    ),
  );
  if (done) upgraded.add(table);
  return { missing: 0, indexed, done };
};

/**
 * The whole upgrade at once, for a table no older code writes to (`npm start` at start, tests): passes until done.
 * A table whose upgrade is done costs one read (the marker), not a read of every deployment.
 */
export const upgradeListIndex = async (db: DynamoDBDocumentClient, table: string): Promise<number> => {
  if (await listIndexReady(db, table)) return 0;
  let indexed = 0;
  for (;;) {
    const pass = await upgradePass(db, table, await readThroughGsi1(db, table), { now: new Date(), graceMs: 0 });
    indexed += pass.indexed;
    if (pass.done) return indexed;
  }
};
