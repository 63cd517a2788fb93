// StreamLeaseStore: one item per slot of a user's open streams (`STREAMSLOTS#<user>` / `SLOT#<n>`), holding the
// lease id and when it runs out. Claiming is a conditional put (the slot is free or its lease expired), renewing
// and releasing are conditional on the lease id. The item's TTL removes slots long after their lease ended.
import {
  DeleteCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { SlotState, StreamLease, StreamLeaseStore } from '../../domain/identity/stream-leases.js';
import { conditionally } from './conditional.js';
import { keys } from './keys.js';

export class DynamoStreamLeaseStore implements StreamLeaseStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async slots(userId: string): Promise<readonly SlotState[]> {
    const { Items } = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.streamSlots(userId) },
        ConsistentRead: true,
      }),
    );
    return (Items ?? []).map((item) => ({ slot: Number(item['slot']), expiresAt: Number(item['expiresAt']) }));
  }

  async claim(lease: StreamLease, now: number, expiresAt: number): Promise<boolean> {
    return conditionally(
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...keys.streamSlot(lease.userId, lease.slot),
            type: 'stream_slot',
            slot: lease.slot,
            leaseId: lease.leaseId,
            expiresAt,
            ttl: Math.ceil(expiresAt / 1000) + 3600,
          },
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :now',
          ExpressionAttributeValues: { ':now': now },
        }),
      ),
    );
  }

  async renew(lease: StreamLease, expiresAt: number): Promise<boolean> {
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.streamSlot(lease.userId, lease.slot),
          UpdateExpression: 'SET expiresAt = :at, #ttl = :ttl',
          ConditionExpression: 'leaseId = :mine',
          ExpressionAttributeNames: { '#ttl': 'ttl' },
          ExpressionAttributeValues: {
            ':at': expiresAt,
            ':ttl': Math.ceil(expiresAt / 1000) + 3600,
            ':mine': lease.leaseId,
          },
        }),
      ),
    );
  }

  async release(lease: StreamLease): Promise<void> {
    await conditionally(
      this.db.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: keys.streamSlot(lease.userId, lease.slot),
          ConditionExpression: 'leaseId = :mine',
          ExpressionAttributeValues: { ':mine': lease.leaseId },
        }),
      ),
    );
  }
}
