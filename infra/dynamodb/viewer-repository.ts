// ViewerRegistry adapter: the viewer channel's connections and subscriptions in the single table.
//
// Layout (keys.ts builds every key):
// - `VIEWER#<connection>` / `CONNECTION`: the connection (the caller as verified at connect, `topicCount`), on gsi2
//   under `VIEWEREXPIRY` by its expiry (the sweep's query). Its subscriptions' back-references share the partition
//   (`TOPIC#<topic key>`), so a disconnect reads what to delete with one query.
// - `VIEWERUSER#<user>` / `CONN#<connection>`: a copy per user's connection (the per-user limit, closing on revoke).
// - `VIEWERTOPIC#<topic key>` / `CONN#<connection>`: a subscription holding a copy of the connection, so the push
//   reads a topic's subscribers with what each may see in one query.
// Every item carries the table's TTL (`ttl`, an hour past the connection's expiry), so anything a race left behind
// dies anyway. Races: a subscribe is a transaction conditioned on the connection item (gone: nothing is written) and
// a disconnect deletes the connection item first and its back-references after, so a subscribe that commits before
// the delete is found by the query that follows it.
import { DeleteCommand, QueryCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Permission } from '../../domain/identity/permissions.js';
import {
  topicKey,
  type ViewerConnection,
  type ViewerRegistry,
  type ViewerSubscribeOutcome,
  type ViewerTopic,
} from '../../domain/streams/viewer-ports.js';
import { isConditionFailure } from './conditional.js';
import { keys, partitions, prefixes, type Key } from './keys.js';
import { queryAll } from './query-all.js';
import { getRecord, type Item } from './records.js';
import { failedAt } from './transactions.js';

/** How long past the connection's expiry its items stay before DynamoDB's TTL removes them (seconds). */
const KEEP_AFTER_EXPIRY_SECONDS = 3600;

const ttlOf = (connection: ViewerConnection): number =>
  Math.ceil(Date.parse(connection.expiresAt) / 1000) + KEEP_AFTER_EXPIRY_SECONDS;

/** The connection's own attributes, as every item that copies it stores them. */
const connectionAttributes = (connection: ViewerConnection) => ({
  connectionId: connection.connectionId,
  userId: connection.userId,
  tenantId: connection.tenantId,
  permissions: [...connection.permissions],
  credential: { ...connection.credential },
  connectedAt: connection.connectedAt,
  expiresAt: connection.expiresAt,
  ttl: ttlOf(connection),
});

const toConnection = (item: Item): ViewerConnection => {
  const credential = item['credential'] as ViewerConnection['credential'];
  return {
    connectionId: String(item['connectionId']),
    userId: String(item['userId']),
    tenantId: (item['tenantId'] as string | null | undefined) ?? null,
    permissions: (item['permissions'] as Permission[] | undefined) ?? [],
    credential: {
      kind: credential.kind,
      sseSessionId: credential.sseSessionId,
      apiKeyId: credential.apiKeyId ?? null,
    },
    connectedAt: String(item['connectedAt']),
    expiresAt: String(item['expiresAt']),
  };
};

export class DynamoViewerRegistry implements ViewerRegistry {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async connect(connection: ViewerConnection): Promise<void> {
    const attributes = connectionAttributes(connection);
    await this.db.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: this.tableName,
              Item: {
                ...keys.viewerConnection(connection.connectionId),
                ...keys.viewerExpiry(connection.expiresAt, connection.connectionId),
                type: 'viewer_connection',
                ...attributes,
                topicCount: 0,
              },
            },
          },
          {
            Put: {
              TableName: this.tableName,
              Item: {
                ...keys.viewerOfUser(connection.userId, connection.connectionId),
                type: 'viewer_of_user',
                ...attributes,
              },
            },
          },
        ],
      }),
    );
  }

  get(connectionId: string): Promise<ViewerConnection | undefined> {
    return getRecord(this.db, this.tableName, keys.viewerConnection(connectionId), toConnection);
  }

  async connectionsOf(userId: string): Promise<readonly ViewerConnection[]> {
    const items = await queryAll(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.viewersOfUser(userId) },
      ConsistentRead: true,
    });
    return items.map(toConnection);
  }

  /**
   * One transaction: count the topic on the connection (it exists and has fewer than `limit`), write the
   * back-reference (new) and the subscription. Cancelled: already subscribed (nothing to change), the connection
   * gone, or the limit reached.
   */
  async subscribe(connection: ViewerConnection, topic: ViewerTopic, limit: number): Promise<ViewerSubscribeOutcome> {
    const key = topicKey(topic);
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.tableName,
                Key: keys.viewerConnection(connection.connectionId),
                UpdateExpression: 'ADD topicCount :one',
                ConditionExpression: 'attribute_exists(pk) AND topicCount < :limit',
                ExpressionAttributeValues: { ':one': 1, ':limit': limit },
              },
            },
            {
              Put: {
                TableName: this.tableName,
                Item: {
                  ...keys.viewerTopicRef(connection.connectionId, key),
                  type: 'viewer_topic_ref',
                  topic: key,
                  ttl: ttlOf(connection),
                },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            this.subscriptionPut(connection, key),
          ],
        }),
      );
      return 'subscribed';
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return this.afterRefusedSubscribe(connection.connectionId, failedAt(error, 1));
    }
  }

  async unsubscribe(connectionId: string, topic: ViewerTopic): Promise<void> {
    const key = topicKey(topic);
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: this.tableName,
                Key: keys.viewerTopicRef(connectionId, key),
                ConditionExpression: 'attribute_exists(pk)',
              },
            },
            {
              Update: {
                TableName: this.tableName,
                Key: keys.viewerConnection(connectionId),
                UpdateExpression: 'ADD topicCount :minus',
                ConditionExpression: 'attribute_exists(pk)',
                ExpressionAttributeValues: { ':minus': -1 },
              },
            },
            { Delete: { TableName: this.tableName, Key: keys.viewerSubscription(key, connectionId) } },
          ],
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      // Not subscribed, or the connection is gone: no count to keep, only a stray subscription to remove.
      await this.deleteAll([keys.viewerSubscription(key, connectionId), keys.viewerTopicRef(connectionId, key)]);
    }
  }

  async subscribers(topic: ViewerTopic): Promise<readonly ViewerConnection[]> {
    const items = await queryAll(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.viewerSubscribers(topicKey(topic)) },
    });
    return items.map(toConnection);
  }

  /** The connection item first (a subscribe racing with this fails or is seen below), then the rest. */
  async disconnect(connectionId: string): Promise<void> {
    const { Attributes } = await this.db.send(
      new DeleteCommand({
        TableName: this.tableName,
        Key: keys.viewerConnection(connectionId),
        ReturnValues: 'ALL_OLD',
      }),
    );
    const refs = await queryAll(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :refs)',
      ExpressionAttributeValues: {
        ':pk': keys.viewerConnection(connectionId).pk,
        ':refs': prefixes.viewerTopicRef,
      },
      ConsistentRead: true,
    });
    const doomed: Key[] = refs.flatMap((ref) => [
      { pk: String(ref['pk']), sk: String(ref['sk']) },
      keys.viewerSubscription(String(ref['topic']), connectionId),
    ]);
    if (Attributes !== undefined) doomed.push(keys.viewerOfUser(String(Attributes['userId']), connectionId));
    await this.deleteAll(doomed);
  }

  async expired(now: Date, limit: number): Promise<readonly string[]> {
    const { Items } = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: 'gsi2',
        KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk < :now',
        ExpressionAttributeValues: { ':pk': partitions.viewerExpiry, ':now': now.toISOString() },
        Limit: limit,
      }),
    );
    return (Items ?? []).map((item) => String(item['connectionId']));
  }

  private subscriptionPut(connection: ViewerConnection, key: string) {
    return {
      Put: {
        TableName: this.tableName,
        Item: {
          ...keys.viewerSubscription(key, connection.connectionId),
          type: 'viewer_subscription',
          topic: key,
          ...connectionAttributes(connection),
        },
      },
    };
  }

  private async afterRefusedSubscribe(
    connectionId: string,
    alreadySubscribed: boolean,
  ): Promise<ViewerSubscribeOutcome> {
    if ((await this.get(connectionId)) === undefined) return 'gone';
    return alreadySubscribed ? 'subscribed' : 'limit';
  }

  /** Deletes the items at `all` side by side (a connection has at most 2 per topic and one more). */
  private async deleteAll(all: readonly Key[]): Promise<void> {
    await Promise.all(all.map((Key) => this.db.send(new DeleteCommand({ TableName: this.tableName, Key }))));
  }
}
