// OAuthClientRepository: one item per client (by id or short id), a claim item client_id -> id written with it in one
// transaction (the token endpoint's strongly consistent lookup, so a rotated secret stops working at once), and the
// admin list on gsi1. Every update is conditioned on the revision the caller read.
import { TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { OAuthClientRepository } from '../../domain/oauth/ports.js';
import type { OAuthClient, OAuthClientChanges } from '../../domain/oauth/types.js';
import { aliasItem } from './aliases.js';
import { keys, partitions } from './keys.js';
import { findRecord, getRecord, listPartition, stripKeys, updateAtRevision, type Item } from './records.js';

const ENTITY = 'oauth_client';

const toClient = (item: Item): OAuthClient => stripKeys<OAuthClient>(item);

export class DynamoOAuthClientRepository implements OAuthClientRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(client: OAuthClient): Promise<void> {
    await this.db.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: this.tableName,
              Item: {
                ...keys.oauthClient(client.id),
                ...keys.oauthClientsIndex(client.createdAt, client.id),
                type: ENTITY,
                ...client,
              },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Put: {
              TableName: this.tableName,
              Item: { ...keys.oauthClientId(client.clientId), type: 'oauth_client_id', id: client.id },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Put: {
              TableName: this.tableName,
              Item: aliasItem(ENTITY, client.shortId, client.id),
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      }),
    );
  }

  get(id: string): Promise<OAuthClient | undefined> {
    return findRecord(this.db, this.tableName, ENTITY, keys.oauthClient, id, toClient);
  }

  async findByClientId(clientId: string): Promise<OAuthClient | undefined> {
    const id = await getRecord(this.db, this.tableName, keys.oauthClientId(clientId), (item) => String(item['id']));
    return id === undefined ? undefined : getRecord(this.db, this.tableName, keys.oauthClient(id), toClient);
  }

  async list(tenant: string | null | 'all'): Promise<readonly OAuthClient[]> {
    const all = await listPartition(this.db, this.tableName, 'gsi1', partitions.oauthClients, toClient);
    return tenant === 'all' ? all : all.filter((c) => c.tenantId === tenant);
  }

  async update(client: OAuthClient, changes: OAuthClientChanges, at: string): Promise<OAuthClient | undefined> {
    const written = await updateAtRevision(
      this.db,
      this.tableName,
      keys.oauthClient(client.id),
      client.revision,
      changes,
      at,
    );
    return written === undefined ? undefined : toClient(written);
  }
}
