// RoleRepository: custom roles, each with a claim on its lower-cased name (written in the same transaction, so
// two creates of one name cannot both succeed), listed on gsi1, and an alias for the short id.
import { GetCommand, QueryCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../../domain/errors.js';
import type { Role, RoleRepository } from '../../domain/identity/ports.js';
import { isConditionFailure } from './conditional.js';
import { keys, partitions } from './keys.js';

const toRole = (item: Record<string, unknown>): Role => ({
  id: String(item['id']),
  shortId: String(item['shortId']),
  name: String(item['name']),
  description: (item['description'] as string | null) ?? null,
  isSystem: false,
  permissions: (item['permissions'] as Role['permissions']) ?? [],
  createdAt: String(item['createdAt']),
  updatedAt: String(item['updatedAt']),
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class DynamoRoleRepository implements RoleRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  #item(role: Role) {
    return { ...keys.role(role.id), ...keys.rolesIndex(role.name), type: 'role', ...role };
  }

  async list(): Promise<readonly Role[]> {
    const { Items } = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :roles',
        ExpressionAttributeValues: { ':roles': partitions.roles },
      }),
    );
    return (Items ?? []).map(toRole);
  }

  async get(idOrShortId: string): Promise<Role | undefined> {
    let id = idOrShortId;
    if (!UUID.test(idOrShortId)) {
      const alias = await this.db.send(
        new GetCommand({ TableName: this.tableName, Key: keys.shortId('role', idOrShortId) }),
      );
      if (alias.Item === undefined) return undefined;
      id = String(alias.Item['role_id']);
    }
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.role(id), ConsistentRead: true }),
    );
    return Item === undefined ? undefined : toRole(Item);
  }

  async findByName(name: string): Promise<Role | undefined> {
    const claim = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.roleName(name), ConsistentRead: true }),
    );
    return claim.Item === undefined ? undefined : this.get(String(claim.Item['role_id']));
  }

  async create(role: Role): Promise<void> {
    await this.#write(
      [
        { Put: { TableName: this.tableName, Item: this.#item(role), ConditionExpression: 'attribute_not_exists(pk)' } },
        {
          Put: {
            TableName: this.tableName,
            Item: { ...keys.roleName(role.name), role_id: role.id },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          Put: {
            TableName: this.tableName,
            Item: { ...keys.shortId('role', role.shortId), role_id: role.id },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ],
      role.name,
    );
  }

  async update(previous: Role, next: Role): Promise<void> {
    const renamed = previous.name.toLowerCase() !== next.name.toLowerCase();
    await this.#write(
      [
        // Optimistic: the role is saved only if nobody changed it since it was read.
        {
          Put: {
            TableName: this.tableName,
            Item: this.#item(next),
            ConditionExpression: 'updatedAt = :seen',
            ExpressionAttributeValues: { ':seen': previous.updatedAt },
          },
        },
        ...(renamed
          ? [
              { Delete: { TableName: this.tableName, Key: keys.roleName(previous.name) } },
              {
                Put: {
                  TableName: this.tableName,
                  Item: { ...keys.roleName(next.name), role_id: next.id },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
            ]
          : []),
      ],
      next.name,
    );
  }

  async delete(role: Role): Promise<void> {
    await this.db.send(
      new TransactWriteCommand({
        TransactItems: [
          { Delete: { TableName: this.tableName, Key: keys.role(role.id) } },
          { Delete: { TableName: this.tableName, Key: keys.roleName(role.name) } },
          { Delete: { TableName: this.tableName, Key: keys.shortId('role', role.shortId) } },
        ],
      }),
    );
  }

  async #write(
    items: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>,
    name: string,
  ): Promise<void> {
    try {
      await this.db.send(new TransactWriteCommand({ TransactItems: items }));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      throw new ConflictError(`A role named '${name}' already exists, or the role changed meanwhile; try again.`, {
        field: 'name',
      });
    }
  }
}
