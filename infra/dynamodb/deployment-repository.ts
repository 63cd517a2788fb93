// Deployments on the single table: one item per deployment (with its plan, the steps packed), listed on gsi1 (in full) and gsi5 (the
// list's slim entries), with a short-id alias.
// Creation happens in DynamoOrchestration.start (in the same transaction as the instance it holds). The engine's
// count of failed passes (`passFailures`) lives on the item and is written without moving the revision.
import { PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DeploymentRepository, DeploymentSummary } from '../../domain/deployments/ports.js';
import type { Deployment } from '../../domain/deployments/types.js';
import { conditionally, whenCondition } from './conditional.js';
import {
  BACKFILL_PER_CALL,
  DEPLOYMENT_LIST_ATTRIBUTES,
  listIndexReady,
  readThroughGsi1,
  upgradePass,
} from './deployment-list-index.js';
import { DynamoChangeFeed } from './change-feed.js';
import { DeploymentSummarySet } from './deployment-summaries.js';
import { encryptionIndex } from './encryption-index.js';
import { keys, partitions } from './keys.js';
import { packSteps, unpackSteps } from './packed-steps.js';
import { queryAll } from './query-all.js';
import { findRecord, getRecord, getRecords, listPartition, stripKeys, type Item } from './records.js';

export const toDeployment = (item: Item): Deployment => stripKeys<Deployment>(unpackSteps(item));

const toSummary = (item: Item): DeploymentSummary =>
  Object.fromEntries(
    DEPLOYMENT_LIST_ATTRIBUTES.map((name) => [name, item[name] ?? null]),
  ) as unknown as DeploymentSummary;

/**
 * The item of a deployment, its plan's steps packed (packed-steps.ts); every write of one is a change (the write's
 * time on the change feed).
 */
export const deploymentItem = (deployment: Deployment) => ({
  ...keys.deployment(deployment.id),
  ...keys.deploymentsIndex(deployment.createdAt, deployment.id),
  ...keys.deploymentsList(deployment.createdAt, deployment.id),
  ...keys.changed('deployments', new Date().toISOString(), deployment.id),
  type: 'deployment',
  ...packSteps(deployment),
  ...encryptionIndex('deployment', deployment, keys.deployment(deployment.id)),
});

export class DynamoDeploymentRepository implements DeploymentRepository {
  /** The list's summaries, kept current from the change feed once the slim index is ready (deployment-summaries.ts). */
  private readonly summaries: DeploymentSummarySet;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    const feed = new DynamoChangeFeed(db, tableName);
    this.summaries = new DeploymentSummarySet({
      all: async () =>
        (
          await queryAll(this.db, {
            TableName: this.tableName,
            IndexName: 'gsi5',
            KeyConditionExpression: 'gsi5pk = :pk',
            ExpressionAttributeValues: { ':pk': partitions.deployments },
          })
        ).map(toSummary),
      changedSince: (from, max) => feed.since('deployments', from, max),
      summariesOf: (ids) =>
        getRecords(this.db, this.tableName, ids.map(keys.deployment), toSummary, DEPLOYMENT_LIST_ATTRIBUTES),
    });
  }

  async get(id: string): Promise<Deployment | undefined> {
    return getRecord(this.db, this.tableName, keys.deployment(id), toDeployment);
  }

  async getMany(ids: readonly string[]): Promise<readonly Deployment[]> {
    return getRecords(this.db, this.tableName, [...new Set(ids)].map(keys.deployment), toDeployment);
  }

  async find(idOrShortId: string): Promise<Deployment | undefined> {
    return findRecord(this.db, this.tableName, 'deployment', keys.deployment, idOrShortId, toDeployment);
  }

  async listAll(): Promise<readonly Deployment[]> {
    return listPartition(this.db, this.tableName, 'gsi1', partitions.deployments, toDeployment);
  }

  /**
   * The slim index gsi5 (only the summaries' attributes are stored there: the plans are never read), read in full
   * once per container and then kept current from the change feed (deployment-summaries.ts). Until the upgrade of a
   * table that held deployments before gsi5 is done, the gsi1 query projected to the same attributes (same answers,
   * whole items read), which also adds missing entries (deployment-list-index.ts).
   */
  async listSummaries(): Promise<readonly DeploymentSummary[]> {
    if (await listIndexReady(this.db, this.tableName)) return this.summaries.current();
    const items = await readThroughGsi1(this.db, this.tableName);
    // Best effort: the answer is right without it, and the next list call goes on.
    await upgradePass(this.db, this.tableName, items, { now: new Date(), limit: BACKFILL_PER_CALL }).catch(
      () => undefined,
    );
    return items.map(toSummary);
  }

  async update(previous: Deployment, next: Deployment): Promise<boolean> {
    return conditionally(
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: deploymentItem(next),
          ConditionExpression: 'revision = :seen',
          ExpressionAttributeValues: { ':seen': previous.revision },
        }),
      ),
    );
  }

  async recordFailedPass(id: string, kind: string): Promise<number | undefined> {
    const open = 'attribute_exists(pk) AND NOT (#state IN (:success, :failed, :cancelled, :rolled_back))';
    const states = {
      ':success': 'success',
      ':failed': 'failed',
      ':cancelled': 'cancelled',
      ':rolled_back': 'rolled_back',
    };
    // Same kind as the last failure: one more; otherwise (or none yet) the count starts again at 1.
    const more = await whenCondition(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.deployment(id),
          UpdateExpression: 'SET passFailures.#count = passFailures.#count + :one',
          ConditionExpression: `${open} AND passFailures.#kind = :kind`,
          ExpressionAttributeNames: { '#state': 'state', '#count': 'count', '#kind': 'kind' },
          ExpressionAttributeValues: { ...states, ':one': 1, ':kind': kind },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (more?.Attributes !== undefined) return Number((more.Attributes['passFailures'] as { count: number }).count);
    const first = await conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.deployment(id),
          UpdateExpression: 'SET passFailures = :first',
          ConditionExpression: open,
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ...states, ':first': { count: 1, kind } },
        }),
      ),
    );
    return first ? 1 : undefined;
  }

  async clearFailedPasses(deployment: Deployment): Promise<void> {
    await conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.deployment(deployment.id),
          UpdateExpression: 'REMOVE passFailures',
          ConditionExpression: 'revision = :seen',
          ExpressionAttributeValues: { ':seen': deployment.revision },
        }),
      ),
    );
  }
}
