// The viewer channel's registry against DynamoDB Local: a connection is found by id and among its user's, a topic's
// subscribers come with what each may see, subscribing is idempotent and limited per connection, a disconnect
// leaves nothing behind (and a subscribe after it stores nothing), and the sweep finds connections past their expiry.
import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ViewerConnection, ViewerTopic } from '../../../../domain/streams/viewer-ports.js';
import { DynamoViewerRegistry } from '../../../../infra/dynamodb/viewer-repository.js';
import { createServiceTable, serviceTableFixture } from '../../../support/aws.js';

const { table, client, db } = serviceTableFixture('viewers');
const registry = new DynamoViewerRegistry(db, table);
let n = 0;

const aConnection = (overrides: Partial<ViewerConnection> = {}): ViewerConnection => {
  n += 1;
  return {
    connectionId: `conn-${n}`,
    userId: `user-${n}`,
    tenantId: 'tenant-a',
    permissions: ['deployments:read'],
    credential: { kind: 'api_key', sseSessionId: `sse-${n}`, apiKeyId: `key-${n}` },
    connectedAt: '2026-11-27T10:00:00.000Z',
    expiresAt: '2026-11-27T12:00:00.000Z',
    ...overrides,
  };
};

const deployment = (id: string): ViewerTopic => ({ kind: 'deployment', deploymentId: id });

/** Every item of the table that mentions the connection (any key), to prove a disconnect leaves none. */
const itemsOf = async (connectionId: string) =>
  ((await db.send(new ScanCommand({ TableName: table, ConsistentRead: true }))).Items ?? []).filter(
    (item) => item['connectionId'] === connectionId || String(item['pk']).includes(connectionId),
  );

beforeAll(async () => {
  await createServiceTable(client, table);
});

describe('DynamoViewerRegistry', () => {
  it('stores a connection, found by id and among its user connections', async () => {
    // Arrange
    const connection = aConnection();
    const other = aConnection({ userId: connection.userId, credential: { ...connection.credential, apiKeyId: null } });
    // Act
    await registry.connect(connection);
    await registry.connect(other);
    // Assess
    expect(await registry.get(connection.connectionId)).toEqual(connection);
    expect(await registry.get('conn-none')).toBeUndefined();
    const mine = await registry.connectionsOf(connection.userId);
    expect([...mine].sort((a, b) => a.connectionId.localeCompare(b.connectionId))).toEqual([connection, other]);
    expect(await registry.connectionsOf('user-none')).toEqual([]);
  });

  it('answers the subscribers of a topic with what each may see, in one query, and forgets an unsubscribed one', async () => {
    // Arrange
    const global = aConnection({ tenantId: null, permissions: ['deployments:read', 'targets:read'] });
    const tenant = aConnection();
    const elsewhere = aConnection();
    for (const c of [global, tenant, elsewhere]) await registry.connect(c);
    // Act
    expect(await registry.subscribe(global, deployment('d-1'), 20)).toBe('subscribed');
    expect(await registry.subscribe(tenant, deployment('d-1'), 20)).toBe('subscribed');
    expect(await registry.subscribe(elsewhere, deployment('d-2'), 20)).toBe('subscribed');
    const before = await registry.subscribers(deployment('d-1'));
    await registry.unsubscribe(tenant.connectionId, deployment('d-1'));
    await registry.unsubscribe(tenant.connectionId, deployment('d-1'));
    const after = await registry.subscribers(deployment('d-1'));
    // Assess
    expect([...before].sort((a, b) => a.connectionId.localeCompare(b.connectionId))).toEqual(
      [global, tenant].sort((a, b) => a.connectionId.localeCompare(b.connectionId)),
    );
    expect(after).toEqual([global]);
    expect(await registry.subscribers(deployment('d-2'))).toEqual([elsewhere]);
    expect(await registry.subscribers({ kind: 'resources', resourceType: 'targets', tenantId: null })).toEqual([]);
  });

  it('counts a topic once however often it is subscribed, and refuses a new topic past the limit', async () => {
    // Arrange
    const connection = aConnection();
    await registry.connect(connection);
    const resources: ViewerTopic = { kind: 'resources', resourceType: 'deployments', tenantId: 'tenant-a' };
    // Act
    const outcomes = [
      await registry.subscribe(connection, deployment('d-1'), 2),
      await registry.subscribe(connection, deployment('d-1'), 2),
      await registry.subscribe(connection, resources, 2),
      await registry.subscribe(connection, resources, 2),
      await registry.subscribe(connection, deployment('d-3'), 2),
    ];
    await registry.unsubscribe(connection.connectionId, deployment('d-1'));
    const afterUnsubscribe = await registry.subscribe(connection, deployment('d-3'), 2);
    // Assess
    expect(outcomes).toEqual(['subscribed', 'subscribed', 'subscribed', 'subscribed', 'limit']);
    expect(afterUnsubscribe).toBe('subscribed');
    expect(await registry.subscribers(resources)).toEqual([connection]);
    expect(await registry.subscribers(deployment('d-3'))).toEqual([connection]);
  });

  it('forgets a connection and everything it watched; a subscribe after the disconnect stores nothing', async () => {
    // Arrange
    const connection = aConnection();
    await registry.connect(connection);
    await registry.subscribe(connection, deployment('d-9'), 20);
    await registry.subscribe(connection, { kind: 'resources', resourceType: 'targets', tenantId: 'tenant-a' }, 20);
    // Act
    await registry.disconnect(connection.connectionId);
    await registry.disconnect(connection.connectionId);
    const late = await registry.subscribe(connection, deployment('d-10'), 20);
    // Assess
    expect(late).toBe('gone');
    expect(await registry.get(connection.connectionId)).toBeUndefined();
    expect(await registry.connectionsOf(connection.userId)).toEqual([]);
    expect(await registry.subscribers(deployment('d-9'))).toEqual([]);
    expect(await itemsOf(connection.connectionId)).toEqual([]);
  });

  it('gives every item a TTL past the connection expiry', async () => {
    // Arrange
    const connection = aConnection();
    await registry.connect(connection);
    await registry.subscribe(connection, deployment('d-ttl'), 20);
    // Act
    const items = await itemsOf(connection.connectionId);
    // Assess
    expect(items).toHaveLength(4);
    const expiry = Date.parse(connection.expiresAt) / 1000;
    for (const item of items) expect(Number(item['ttl'])).toBeGreaterThan(expiry);
  });

  it('finds the connections past their expiry for the sweep, up to the limit', async () => {
    // Arrange
    const old = aConnection({ expiresAt: '2026-11-27T09:00:00.000Z' });
    const older = aConnection({ expiresAt: '2026-11-27T08:00:00.000Z' });
    const fresh = aConnection({ expiresAt: '2026-11-27T13:00:00.000Z' });
    for (const c of [old, older, fresh]) await registry.connect(c);
    const now = new Date('2026-11-27T10:30:00.000Z');
    // Act
    const expired = await registry.expired(now, 10);
    const one = await registry.expired(now, 1);
    await registry.disconnect(older.connectionId);
    const afterDisconnect = await registry.expired(now, 10);
    // Assess
    expect(expired).toEqual([older.connectionId, old.connectionId]);
    expect(one).toEqual([older.connectionId]);
    expect(afterDisconnect).toEqual([old.connectionId]);
    const index = await db.send(
      new QueryCommand({
        TableName: table,
        IndexName: 'gsi2',
        KeyConditionExpression: 'gsi2pk = :pk',
        ExpressionAttributeValues: { ':pk': 'VIEWEREXPIRY' },
      }),
    );
    expect(index.Items?.map((item) => item['connectionId'])).toContain(fresh.connectionId);
  });
});
