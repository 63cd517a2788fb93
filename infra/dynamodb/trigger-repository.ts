// TriggerRepository: one item per trigger (by id or short id, alias item), its owner's list on gsi1, and one TTL'd
// item per delivery id received (a conditional put: the replay check). Edits are conditioned on the revision; a call's time is a plain write.
import {
  DeleteCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { TriggerRepository } from '../../domain/triggers/ports.js';
import type { Trigger, TriggerChanges } from '../../domain/triggers/types.js';
import { aliasItem } from './aliases.js';
import { encryptionIndex } from './encryption-index.js';
import { conditionally } from './conditional.js';
import { keys } from './keys.js';
import { findRecord, listPartition, stripKeys, updateAtRevision, type Item } from './records.js';

const ENTITY = 'trigger';
const toTrigger = (item: Item): Trigger => stripKeys<Trigger>(item);

export class DynamoTriggerRepository implements TriggerRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(trigger: Trigger): Promise<void> {
    await this.db.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: this.tableName,
              Item: {
                ...keys.trigger(trigger.id),
                ...keys.triggersIndex(trigger.ownerId, trigger.createdAt, trigger.id),
                type: ENTITY,
                ...trigger,
                ...encryptionIndex(ENTITY, trigger, keys.trigger(trigger.id)),
              },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Put: {
              TableName: this.tableName,
              Item: aliasItem(ENTITY, trigger.shortId, trigger.id),
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      }),
    );
  }

  get(id: string): Promise<Trigger | undefined> {
    return findRecord(this.db, this.tableName, ENTITY, keys.trigger, id, toTrigger);
  }

  listByOwner(ownerId: string): Promise<readonly Trigger[]> {
    return listPartition(this.db, this.tableName, 'gsi1', keys.triggersIndex(ownerId, '', '').gsi1pk, toTrigger);
  }

  async update(trigger: Trigger, changes: TriggerChanges, at: string): Promise<Trigger | undefined> {
    // The encryption index follows the sealed fields (a rotated secret may be under another key); a trigger always
    // holds its secret, so its entry is only ever replaced.
    const resealed = changes.sealedSecret !== undefined || changes.request !== undefined;
    const index = resealed ? encryptionIndex(ENTITY, { ...trigger, ...changes }, keys.trigger(trigger.id)) : {};
    const written = await updateAtRevision(
      this.db,
      this.tableName,
      keys.trigger(trigger.id),
      trigger.revision,
      { ...changes, ...index },
      at,
    );
    return written === undefined ? undefined : toTrigger(written);
  }

  async delete(id: string): Promise<void> {
    const trigger = await this.get(id);
    if (trigger === undefined) return;
    await this.db.send(
      new TransactWriteCommand({
        TransactItems: [
          { Delete: { TableName: this.tableName, Key: keys.trigger(trigger.id) } },
          { Delete: { TableName: this.tableName, Key: keys.shortId(ENTITY, trigger.shortId) } },
        ],
      }),
    );
  }

  async markTriggered(id: string, at: string): Promise<void> {
    await conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.trigger(id),
          UpdateExpression: 'SET lastTriggeredAt = :at',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':at': at },
        }),
      ),
    );
  }

  claimDelivery(triggerId: string, deliveryId: string, ttlSeconds: number): Promise<boolean> {
    const now = Math.floor(Date.now() / 1000);
    return conditionally(
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...keys.triggerDelivery(triggerId, deliveryId),
            type: 'trigger_delivery',
            ttl: now + ttlSeconds,
          },
          // DynamoDB deletes expired items late (up to days): an expired claim counts as gone, so the window is exact.
          ConditionExpression: 'attribute_not_exists(pk) OR #ttl <= :now',
          ExpressionAttributeNames: { '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':now': now },
        }),
      ),
    );
  }

  async releaseDelivery(triggerId: string, deliveryId: string): Promise<void> {
    await this.db.send(
      new DeleteCommand({ TableName: this.tableName, Key: keys.triggerDelivery(triggerId, deliveryId) }),
    );
  }
}
