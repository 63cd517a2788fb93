// SubscriptionRepository and DeliveryRepository: one item per subscription (its tenant's list on gsi1, the sealed
// secret in the encryption index), one item per delivery (its subscription's log on gsi1, expiring after 7 days).
// Edits by people are conditioned on the revision; the service's own marks (failure counts, disabling) are plain
// writes; a delivery's states move only by conditional writes on (state, attempt).
import { DeleteCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DeliveryRepository, SubscriptionRepository } from '../../domain/webhooks/ports.js';
import type { Delivery, Subscription, SubscriptionChanges } from '../../domain/webhooks/types.js';
import { DELIVERY_RETENTION_DAYS } from '../../domain/webhooks/subscriptions.js';
import { conditionally, whenCondition } from './conditional.js';
import { encryptionIndex } from './encryption-index.js';
import { keys } from './keys.js';
import { getRecord, listPartition, stripKeys, updateAtRevision, type Item } from './records.js';

const ENTITY = 'webhook';
const toSubscription = (item: Item): Subscription => stripKeys<Subscription>(item);
const toDelivery = (item: Item): Delivery => {
  const { ttl: _ttl, ...delivery } = stripKeys<Delivery & { ttl?: number }>(item);
  return delivery;
};

export class DynamoSubscriptionRepository implements SubscriptionRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(subscription: Subscription): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...keys.webhook(subscription.id),
          ...keys.webhooksIndex(subscription.tenantId, subscription.createdAt, subscription.id),
          type: ENTITY,
          ...subscription,
          ...encryptionIndex(ENTITY, subscription, keys.webhook(subscription.id)),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  get(id: string): Promise<Subscription | undefined> {
    return getRecord(this.db, this.tableName, keys.webhook(id), toSubscription);
  }

  listByTenant(tenantId: string | null): Promise<readonly Subscription[]> {
    return listPartition(this.db, this.tableName, 'gsi1', keys.webhooksPartition(tenantId), toSubscription);
  }

  async update(
    subscription: Subscription,
    changes: SubscriptionChanges,
    at: string,
  ): Promise<Subscription | undefined> {
    // A new secret may be sealed under another key: the index entry is derived again from the item as written.
    const index =
      changes.sealedSecret === undefined
        ? {}
        : encryptionIndex(ENTITY, { ...subscription, ...changes }, keys.webhook(subscription.id));
    const written = await updateAtRevision(
      this.db,
      this.tableName,
      keys.webhook(subscription.id),
      subscription.revision,
      { ...changes, ...index },
      at,
    );
    return written === undefined ? undefined : toSubscription(written);
  }

  async delete(id: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: keys.webhook(id) }));
  }

  async countFailure(id: string, at: string): Promise<number | undefined> {
    const answer = await whenCondition(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.webhook(id),
          UpdateExpression: 'ADD consecutiveFailures :one SET lastFailureAt = :at',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':one': 1, ':at': at },
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    );
    const count = answer?.Attributes?.['consecutiveFailures'];
    return typeof count === 'number' ? count : undefined;
  }

  async clearFailures(id: string): Promise<void> {
    await conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.webhook(id),
          UpdateExpression: 'SET consecutiveFailures = :zero',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':zero': 0 },
        }),
      ),
    );
  }

  async disable(id: string, reason: string, at: string): Promise<void> {
    await conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.webhook(id),
          UpdateExpression: 'SET enabled = :off, disabledReason = :reason, disabledAt = :at, updatedAt = :at',
          ConditionExpression: 'attribute_exists(pk) AND enabled = :on',
          ExpressionAttributeValues: { ':off': false, ':on': true, ':reason': reason, ':at': at },
        }),
      ),
    );
  }
}

const STATE_FIELDS = [
  'state',
  'attempt',
  'maxAttempt',
  'leaseUntil',
  'nextAttemptAt',
  'statusCode',
  'durationMs',
  'responseExcerpt',
  'error',
  'attempts',
  'updatedAt',
] as const;

export class DynamoDeliveryRepository implements DeliveryRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  create(delivery: Delivery): Promise<boolean> {
    return conditionally(
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...keys.webhookDelivery(delivery.id),
            ...keys.webhookDeliveriesIndex(delivery.subscriptionId, delivery.createdAt, delivery.id),
            type: 'webhook_delivery',
            ...delivery,
            ttl: Math.floor(Date.parse(delivery.createdAt) / 1000) + DELIVERY_RETENTION_DAYS * 86_400,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
  }

  get(id: string): Promise<Delivery | undefined> {
    return getRecord(this.db, this.tableName, keys.webhookDelivery(id), toDelivery);
  }

  async listBySubscription(subscriptionId: string): Promise<readonly Delivery[]> {
    const all = await listPartition(
      this.db,
      this.tableName,
      'gsi1',
      keys.webhookDeliveriesPartition(subscriptionId),
      toDelivery,
    );
    return all.reverse();
  }

  claim(delivery: Delivery, attempt: number, leaseUntil: string, at: string): Promise<boolean> {
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.webhookDelivery(delivery.id),
          UpdateExpression: 'SET #state = :sending, attempt = :attempt, leaseUntil = :lease, updatedAt = :at',
          ConditionExpression:
            '(#state = :pending AND attempt = :previous) OR (#state = :sending AND attempt = :attempt AND leaseUntil < :at)',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':sending': 'sending',
            ':pending': 'pending',
            ':attempt': attempt,
            ':previous': attempt - 1,
            ':lease': leaseUntil,
            ':at': at,
          },
        }),
      ),
    );
  }

  /** Writes the state fields of `next` if the delivery is still in `expected` state at `expected.attempt`. */
  private write(expected: Delivery, next: Delivery, states: readonly string[]): Promise<boolean> {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':attemptWas': expected.attempt };
    const sets = STATE_FIELDS.map((field) => {
      names[`#${field}`] = field;
      values[`:${field}`] = next[field];
      return `#${field} = :${field}`;
    });
    states.forEach((state, i) => (values[`:was${i}`] = state));
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.webhookDelivery(expected.id),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: `#attempt = :attemptWas AND #state IN (${states.map((_, i) => `:was${i}`).join(', ')})`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      ),
    );
  }

  record(delivery: Delivery, next: Delivery): Promise<boolean> {
    return this.write(delivery, next, ['sending']);
  }

  reopen(delivery: Delivery, next: Delivery): Promise<boolean> {
    return this.write(delivery, next, ['delivered', 'failed', 'cancelled']);
  }
}
