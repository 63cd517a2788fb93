// Orchestration instances on the single table (decisions.md section 7). The partition ORCHESTRATION holds the
// capacity (CONFIG) and one item per instance that has ever been used (INSTANCE#<id>, `holder` = the deployment
// holding it). Taking an instance is part of the transaction that stores the new deployment, conditioned on the
// instance being free and within the capacity; freeing it is part of the transaction that ends the deployment. So
// concurrent creates never exceed the capacity, and a crash cannot leave an instance held by a finished deployment.
// The same transaction writes the outbox entry of what the end still owes (partition OUTBOX, see outbox.ts), and
// instance items carry `checkedAt`, the last run of their holder's periodic engine check (what the sweep reads).
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { Orchestration } from '../../domain/deployments/ports.js';
import type {
  CreateClaim,
  Deployment,
  HeldInstance,
  OutboxEntry,
  PendingRequest,
} from '../../domain/deployments/types.js';
import { RequestNotProcessingError } from '../../domain/deployments/dispatch.js';
import { CreateClaimedError } from '../../domain/deployments/start.js';
import { aliasItem } from './aliases.js';
import { conditionally, isConditionFailure, readBack } from './conditional.js';
import { claimItem } from './create-claims.js';
import { deploymentItem } from './deployment-repository.js';
import { changedValues } from './pending-request-repository.js';
import { keys, prefixes } from './keys.js';
import { failedAt } from './transactions.js';

/** `instance-1`, `instance-2`, ... */
export const instanceId = (n: number): string => `instance-${n}`;
const ATTEMPTS = 5;
const toEntry = (item: Record<string, unknown>): OutboxEntry => ({
  deploymentId: String(item['deploymentId']),
  ...(item['tenantId'] === undefined ? {} : { tenantId: (item['tenantId'] ?? null) as string | null }),
  at: String(item['at']),
  cancelCommands: item['cancelCommands'] === true,
  ...(Array.isArray(item['openCommands']) ? { openCommands: (item['openCommands'] as unknown[]).map(String) } : {}),
  wakeDispatcher: item['wakeDispatcher'] === true,
  finalEvent: (item['finalEvent'] ?? null) as OutboxEntry['finalEvent'],
});

export class DynamoOrchestration implements Orchestration {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly defaultCapacity: number,
  ) {}

  async capacity(): Promise<number> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.orchestrationConfig(), ConsistentRead: true }),
    );
    return Item === undefined ? this.defaultCapacity : Number(Item['instances']);
  }

  async setCapacity(instances: number): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...keys.orchestrationConfig(), type: 'orchestration_config', instances },
      }),
    );
  }

  async holders(): Promise<ReadonlyMap<string, string>> {
    return new Map((await this.heldInstances()).map((held) => [held.instanceId, held.deploymentId]));
  }

  async start(
    deployment: Deployment,
    dispatched?: { readonly request: PendingRequest; readonly at: Date },
    claim?: CreateClaim,
  ): Promise<string | null | undefined> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      const [capacity, held] = await Promise.all([this.capacity(), this.holders()]);
      const free = Array.from({ length: capacity }, (_, i) => instanceId(i + 1)).filter((id) => !held.has(id));
      // After a shrink, instances above the capacity may still be held: they count against it too.
      if (free.length === 0 || held.size >= capacity) return undefined;
      // A random free instance: concurrent creates rarely pick the same one.
      const chosen = free[Math.floor(Math.random() * free.length)] as string;
      const items = this.startItems({ ...deployment, instanceId: chosen }, chosen, dispatched);
      try {
        await this.db.send(
          new TransactWriteCommand({
            TransactItems: [
              ...items,
              ...(claim === undefined
                ? []
                : [claimItem(this.tableName, claim, { kind: 'deployment', id: deployment.id })]),
            ],
          }),
        );
        return chosen;
      } catch (error) {
        // The answer lost after the commit (or the SDK's retry refused by the first attempt's deployment item): the
        // deployment is stored, on the instance it holds (null: it has ended already and holds none, not the one
        // tried). Never a second one: the caller would queue or fail it.
        if (!isConditionFailure(error) || failedAt(error, 0)) {
          const stored = await readBack(error, () => this.storedInstance(deployment.id));
          if (stored !== undefined) return stored;
          if (!isConditionFailure(error)) throw error;
        }
        if (dispatched !== undefined && failedAt(error, 4)) throw new RequestNotProcessingError(dispatched.request.id);
        // The key claimed by another create (the claim is the item after the start's): nothing stored.
        if (claim !== undefined && failedAt(error, items.length)) throw new CreateClaimedError(claim.scope);
        // The instance was taken (or the capacity lowered) meanwhile: look again.
      }
    }
    return undefined;
  }

  /** The instance a stored deployment holds (null once it ended), or undefined when it is not stored. */
  private async storedInstance(deploymentId: string): Promise<string | null | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: keys.deployment(deploymentId),
        ConsistentRead: true,
        ProjectionExpression: 'instanceId',
      }),
    );
    if (Item === undefined) return undefined;
    return typeof Item['instanceId'] === 'string' ? Item['instanceId'] : null;
  }

  private startItems(
    deployment: Deployment,
    chosen: string,
    dispatched: { readonly request: PendingRequest; readonly at: Date } | undefined,
  ) {
    const n = Number(chosen.slice('instance-'.length));
    return [
      {
        Put: {
          TableName: this.tableName,
          Item: deploymentItem(deployment),
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          TableName: this.tableName,
          Item: aliasItem('deployment', deployment.shortId, deployment.id),
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Update: {
          TableName: this.tableName,
          Key: keys.orchestrationInstance(chosen),
          UpdateExpression: 'SET holder = :deployment, instance_id = :id, heldSince = :at',
          ConditionExpression: 'attribute_not_exists(holder)',
          ExpressionAttributeValues: {
            ':deployment': deployment.id,
            ':id': chosen,
            ':at': deployment.startedAt ?? deployment.createdAt,
          },
        },
      },
      {
        ConditionCheck: {
          TableName: this.tableName,
          Key: keys.orchestrationConfig(),
          // No settings item yet: the default capacity, which the caller already applied.
          ConditionExpression:
            n <= this.defaultCapacity ? 'attribute_not_exists(pk) OR instances >= :n' : 'instances >= :n',
          ExpressionAttributeValues: { ':n': n },
        },
      },
      ...(dispatched === undefined
        ? []
        : [
            {
              Update: {
                TableName: this.tableName,
                Key: keys.pendingRequest(dispatched.request.id),
                UpdateExpression:
                  'SET #status = :dispatched, deploymentId = :deployment, dispatchedAt = :at, dispatchedToInstanceId = :instance, ' +
                  'processingSince = :null, waitingReason = :null, waitingUntil = :null, gsi3pk = :c3pk, gsi3sk = :c3sk ' +
                  'REMOVE gsi1pk, gsi1sk',
                ConditionExpression: '#status = :processing',
                ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: {
                  ':dispatched': 'dispatched',
                  ':processing': 'processing',
                  ':deployment': deployment.id,
                  ':at': dispatched.at.toISOString(),
                  ':instance': chosen,
                  ':null': null,
                  ...changedValues(dispatched.request.id),
                },
              },
            },
          ]),
    ];
  }

  async finish(previous: Deployment, next: Deployment, owed?: OutboxEntry): Promise<boolean> {
    const release =
      previous.instanceId === null
        ? []
        : [
            {
              Update: {
                TableName: this.tableName,
                Key: keys.orchestrationInstance(previous.instanceId),
                UpdateExpression: 'REMOVE holder, heldSince, checkedAt',
                ConditionExpression: 'attribute_not_exists(holder) OR holder = :deployment',
                ExpressionAttributeValues: { ':deployment': previous.id },
              },
            },
          ];
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.tableName,
                Item: deploymentItem({ ...next, instanceId: null }),
                ConditionExpression: 'revision = :seen',
                ExpressionAttributeValues: { ':seen': previous.revision },
              },
            },
            ...release,
            ...(owed === undefined
              ? []
              : [
                  {
                    Put: {
                      TableName: this.tableName,
                      Item: { ...keys.outboxEntry(owed.at, owed.deploymentId), type: 'outbox', ...owed },
                    },
                  },
                ]),
          ],
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async outbox(before: Date, limit: number): Promise<readonly OutboxEntry[]> {
    const { Items = [] } = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND sk < :before',
        ExpressionAttributeValues: { ':pk': keys.outboxEntry('', '').pk, ':before': before.toISOString() },
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    return Items.map(toEntry);
  }

  async outboxEntry(deploymentId: string, at: string): Promise<OutboxEntry | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.outboxEntry(at, deploymentId), ConsistentRead: true }),
    );
    return Item === undefined ? undefined : toEntry(Item);
  }

  async settled(entry: OutboxEntry): Promise<void> {
    await this.db.send(
      new DeleteCommand({ TableName: this.tableName, Key: keys.outboxEntry(entry.at, entry.deploymentId) }),
    );
  }

  async heldInstances(): Promise<readonly HeldInstance[]> {
    const { Items = [] } = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :instance)',
        ExpressionAttributeValues: {
          ':pk': keys.orchestrationConfig().pk,
          ':instance': prefixes.orchestrationInstance,
        },
        ConsistentRead: true,
      }),
    );
    return Items.filter((i) => typeof i['holder'] === 'string').map((i) => ({
      instanceId: String(i['instance_id']),
      deploymentId: String(i['holder']),
      heldSince: typeof i['heldSince'] === 'string' ? i['heldSince'] : null,
      checkedAt: typeof i['checkedAt'] === 'string' ? i['checkedAt'] : null,
    }));
  }

  async recordCheck(instance: string, deploymentId: string, at: Date, minGapMs: number): Promise<boolean> {
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.orchestrationInstance(instance),
          UpdateExpression: 'SET checkedAt = :at',
          ConditionExpression: 'holder = :deployment AND (attribute_not_exists(checkedAt) OR checkedAt <= :latest)',
          ExpressionAttributeValues: {
            ':at': at.toISOString(),
            ':deployment': deploymentId,
            ':latest': new Date(at.getTime() - minGapMs).toISOString(),
          },
        }),
      ),
    );
  }
}
