// Targets on the single table: the target item (listed on gsi1), its short-id alias and its agent-token lookup
// item, written and deleted together in one transaction, which also counts the target as a reference on its
// tenant and environment (so neither can be deleted while it has targets); enrollment tokens by hash until they
// expire or are revoked (listed on gsi1, found by id on gsi2; each registration takes one use conditionally).
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { EnrollmentTokenRepository, TargetRepository } from '../../domain/targets/ports.js';
import type { EnrollmentToken, Target } from '../../domain/targets/types.js';
import { ConflictError } from '../../domain/errors.js';
import { aliasItem } from './aliases.js';
import { environmentReference } from './environment-repository.js';
import { conditionally, isConditionFailure } from './conditional.js';
import { findOnGsi2 } from './index-lag.js';
import { keys, partitions } from './keys.js';
import { findRecord, getRecord, getRecords, listPartition, stripKeys, type Item } from './records.js';
import { failedAt, tenantReference } from './transactions.js';

export const toTarget = (item: Item): Target => stripKeys<Target>(item);

/** How long a connection's lookup item is kept: API Gateway closes every connection after 2 hours. */
const CONNECTION_LOOKUP_SECONDS = 3 * 3600;

/** The values of `SET gsi3pk = :c3pk, gsi3sk = :c3sk`: a write of the target is a change, at this moment. */
const changedValues = (id: string) => {
  const changed = keys.changed('targets', new Date().toISOString(), id);
  return { ':c3pk': changed.gsi3pk, ':c3sk': changed.gsi3sk };
};
const CHANGED = 'gsi3pk = :c3pk, gsi3sk = :c3sk';
/** How long a deleted target's tombstone stays on the change feed (streams look back seconds, not hours). */
const TOMBSTONE_SECONDS = 3600;

const itemOf = (target: Target) => ({
  ...keys.target(target.id),
  ...keys.targetsIndex(target.createdAt, target.id),
  ...keys.changed('targets', new Date().toISOString(), target.id),
  type: 'target',
  ...target,
});

export class DynamoTargetRepository implements TargetRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(target: Target): Promise<void> {
    const put = (Item: Record<string, unknown>) => ({
      Put: { TableName: this.tableName, Item, ConditionExpression: 'attribute_not_exists(pk)' },
    });
    const references = this.references(target, 1);
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            put(itemOf(target)),
            put(aliasItem('target', target.shortId, target.id)),
            // The tenant too: authenticating an agent reads this item only (neither ever changes).
            put({ ...keys.agentToken(target.agentTokenHash), target_id: target.id, tenant_id: target.tenantId }),
            ...references,
          ],
        }),
      );
    } catch (error) {
      if (references.some((_, i) => failedAt(error, 3 + i)))
        throw new ConflictError('The tenant or environment of the enrollment token no longer exists.');
      throw error;
    }
  }

  private references(target: Target, delta: 1 | -1) {
    return [
      ...(target.tenantId === null ? [] : [tenantReference(this.tableName, target.tenantId, delta)]),
      ...(target.environmentId === null ? [] : [environmentReference(this.tableName, target.environmentId, delta)]),
    ];
  }

  async get(id: string): Promise<Target | undefined> {
    return getRecord(this.db, this.tableName, keys.target(id), toTarget);
  }

  async getMany(ids: readonly string[]): Promise<readonly Target[]> {
    return getRecords(this.db, this.tableName, [...new Set(ids)].map(keys.target), toTarget);
  }

  async find(idOrShortId: string): Promise<Target | undefined> {
    return findRecord(this.db, this.tableName, 'target', keys.target, idOrShortId, toTarget);
  }

  async findByAgentTokenHash(tokenHash: string): Promise<Target | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keys.agentToken(tokenHash) }));
    return Item === undefined ? undefined : this.get(String(Item['target_id']));
  }

  async agentOfToken(tokenHash: string) {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keys.agentToken(tokenHash) }));
    if (Item === undefined) return undefined;
    const targetId = String(Item['target_id']);
    if ('tenant_id' in Item) {
      const tenant = Item['tenant_id'];
      return { targetId, tenantId: typeof tenant === 'string' ? tenant : null };
    }
    const target = await this.get(targetId); // a lookup item from before it carried the tenant
    return target === undefined ? undefined : { targetId, tenantId: target.tenantId, heardAt: target.lastHeartbeatAt };
  }

  /**
   * lastHeartbeatAt = at, only when it was older than `olderThan` (or unset) and the target exists; with
   * `agentVersion`, the agent's version in the same write.
   */
  async recordSignOfLife(id: string, at: Date, olderThan: Date, agentVersion?: string): Promise<void> {
    await conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.target(id),
          UpdateExpression: `SET lastHeartbeatAt = :at, ${agentVersion === undefined ? '' : 'agentVersion = :version, '}${CHANGED}`,
          ConditionExpression:
            'attribute_exists(pk) AND (attribute_type(lastHeartbeatAt, :null) OR lastHeartbeatAt < :older)',
          ExpressionAttributeValues: {
            ':at': at.toISOString(),
            ':older': olderThan.toISOString(),
            ':null': 'NULL',
            ...(agentVersion === undefined ? {} : { ':version': agentVersion }),
            ...changedValues(id),
          },
        }),
      ),
    );
  }

  async recordSignOff(id: string, at: Date): Promise<void> {
    await conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.target(id),
          UpdateExpression: `SET signedOffAt = :at, ${CHANGED}`,
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':at': at.toISOString(), ...changedValues(id) },
        }),
      ),
    );
  }

  async listAll(): Promise<readonly Target[]> {
    return listPartition(this.db, this.tableName, 'gsi1', partitions.targets, toTarget);
  }

  async update(previous: Target, next: Target): Promise<boolean> {
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.target(previous.id),
          UpdateExpression: `SET #name = :name, tags = :tags, updatedAt = :now, ${CHANGED}`,
          ConditionExpression: 'updatedAt = :seen',
          ExpressionAttributeNames: { '#name': 'name' },
          ExpressionAttributeValues: {
            ...changedValues(previous.id),
            ':name': next.name,
            ':tags': next.tags,
            ':now': next.updatedAt,
            ':seen': previous.updatedAt,
          },
        }),
      ),
    );
  }

  async recordHeartbeat(id: string, at: Date, agentVersion?: string): Promise<void> {
    // Heartbeats only move forward, and a deleted target is not brought back by a late one.
    await this.recordSignOfLife(id, at, at, agentVersion);
  }

  /** agentVersion = version, only for an existing target whose stored version differs (no write otherwise). */
  async recordAgentVersion(id: string, agentVersion: string): Promise<void> {
    await conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.target(id),
          UpdateExpression: `SET agentVersion = :version, ${CHANGED}`,
          ConditionExpression: 'attribute_exists(pk) AND agentVersion <> :version',
          ExpressionAttributeValues: { ':version': agentVersion, ...changedValues(id) },
        }),
      ),
    );
  }

  async connect(
    targetId: string,
    connectionId: string,
    at: Date,
    instance: string | null = null,
    agentVersion?: string,
  ): Promise<{ replaced: string | null } | undefined> {
    const now = at.toISOString();
    const lookup = keys.agentConnection(connectionId);
    // The lookup first: a connection the target names can always be traced back (it expires after API Gateway's
    // 2-hour limit on any connection, with an hour to spare).
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...lookup,
          type: 'agent_connection',
          targetId,
          connectedAt: now,
          ttl: Math.ceil(at.getTime() / 1000) + CONNECTION_LOOKUP_SECONDS,
        },
      }),
    );
    try {
      const { Attributes } = await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.target(targetId),
          UpdateExpression: `SET connectionId = :id, connectionInstance = :instance, connectedAt = :now, lastHeartbeatAt = :now, ${agentVersion === undefined ? '' : 'agentVersion = :version, '}${CHANGED}`,
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: {
            ':id': connectionId,
            ':instance': instance,
            ':now': now,
            ...(agentVersion === undefined ? {} : { ':version': agentVersion }),
            ...changedValues(targetId),
          },
          ReturnValues: 'UPDATED_OLD',
        }),
      );
      const previous = Attributes?.['connectionId'];
      return { replaced: typeof previous === 'string' && previous !== connectionId ? previous : null };
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: lookup }));
      return undefined;
    }
  }

  async connectionTarget(connectionId: string): Promise<string | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.agentConnection(connectionId), ConsistentRead: true }),
    );
    return typeof Item?.['targetId'] === 'string' ? Item['targetId'] : undefined;
  }

  async recordConnectionHeartbeat(targetId: string, connectionId: string, at: Date): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.target(targetId),
          UpdateExpression: `SET lastHeartbeatAt = :at, ${CHANGED}`,
          ConditionExpression:
            'connectionId = :connection AND (attribute_type(lastHeartbeatAt, :null) OR lastHeartbeatAt < :at)',
          ExpressionAttributeValues: {
            ':at': at.toISOString(),
            ':connection': connectionId,
            ':null': 'NULL',
            ...changedValues(targetId),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      // Refused: a newer heartbeat stored already (still this connection's), or the connection is not the target's.
      return error.Item?.['connectionId']?.S === connectionId;
    }
  }

  async disconnect(targetId: string, connectionId: string, at: Date): Promise<void> {
    await conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.target(targetId),
          UpdateExpression: `SET disconnectedAt = :at, ${CHANGED} REMOVE connectionId, connectionInstance`,
          ConditionExpression: 'connectionId = :id',
          ExpressionAttributeValues: { ':id': connectionId, ':at': at.toISOString(), ...changedValues(targetId) },
        }),
      ),
    );
    await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: keys.agentConnection(connectionId) }));
  }

  async delete(target: Target): Promise<void> {
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: this.tableName,
                Key: keys.target(target.id),
                ConditionExpression: 'attribute_exists(pk)',
              },
            },
            ...[keys.shortId('target', target.shortId), keys.agentToken(target.agentTokenHash)].map((Key) => ({
              Delete: { TableName: this.tableName, Key },
            })),
            // The deletion is a change too: a tombstone on the change feed, for the streams to report.
            {
              Put: {
                TableName: this.tableName,
                Item: {
                  ...keys.targetTombstone(target.id),
                  ...keys.changed('targets', new Date().toISOString(), target.id),
                  type: 'target_tombstone',
                  tenantId: target.tenantId,
                  ttl: Math.ceil(Date.now() / 1000) + TOMBSTONE_SECONDS,
                },
              },
            },
            ...this.references(target, -1),
          ],
        }),
      );
    } catch (error) {
      if (!failedAt(error, 0)) throw error; // deleted meanwhile by someone else: done, and counted once
    }
  }
}

const toEnrollmentToken = (item: Item): EnrollmentToken => {
  const { ttl: _ttl, ...rest } = item;
  return stripKeys<EnrollmentToken>(rest);
};

export class DynamoEnrollmentTokenRepository implements EnrollmentTokenRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(token: EnrollmentToken): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...keys.enrollmentToken(token.tokenHash),
          ...keys.enrollmentTokensIndex(token.createdAt, token.id),
          ...keys.enrollmentTokenById(token.id),
          type: 'enrollment_token',
          ...token,
          ttl: Math.ceil(Date.parse(token.expiresAt) / 1000) + 3600,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async get(tokenHash: string): Promise<EnrollmentToken | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.enrollmentToken(tokenHash), ConsistentRead: true }),
    );
    return Item === undefined ? undefined : toEnrollmentToken(Item);
  }

  /** Through gsi2: a token created a moment ago may not be there yet, so a miss looks again (index-lag.ts). */
  async findById(id: string): Promise<EnrollmentToken | undefined> {
    return findOnGsi2(this.db, this.tableName, keys.enrollmentTokenById(id).gsi2pk, toEnrollmentToken);
  }

  async listAll(): Promise<readonly EnrollmentToken[]> {
    return listPartition(this.db, this.tableName, 'gsi1', partitions.enrollmentTokens, toEnrollmentToken);
  }

  async takeUse(tokenHash: string, at: Date): Promise<boolean> {
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.enrollmentToken(tokenHash),
          UpdateExpression: 'SET uses = uses + :one',
          ConditionExpression: 'attribute_exists(pk) AND uses < maxUses AND expiresAt > :at',
          ExpressionAttributeValues: { ':one': 1, ':at': at.toISOString() },
        }),
      ),
    );
  }

  async delete(token: EnrollmentToken): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: keys.enrollmentToken(token.tokenHash) }));
  }
}
