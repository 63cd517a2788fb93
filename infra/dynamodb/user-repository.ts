// UserRepository on the single table: the user item plus uniqueness claims for its email and username and an
// alias for its short id, all written in one transaction so a race cannot create two users with one email.
// Every write of the user item is an UpdateItem of the fields it owns that adds 1 to `revision`, so writes never
// undo each other and an admin edit (conditioned on the revision it read) notices any write since.
import {
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { ConflictError, ValidationError } from '../../domain/errors.js';
import type { UserDirectory, UserRepository } from '../../domain/identity/ports.js';
import type { IdentityLink, TwoFactor, User, UserChanges } from '../../domain/identity/types.js';
import type { LinkedUsers, SignInChanges } from '../../domain/sso/ports.js';
import { conditionally } from './conditional.js';
import { linkItems } from './identity-provider-repository.js';
import { encryptionIndex, encryptionIndexUpdate } from './encryption-index.js';
import { keys, partitions } from './keys.js';
import { stripKeys } from './records.js';
import { queryAll } from './query-all.js';
import { failedAt, tenantReference } from './transactions.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Recovery codes are stored as a map from code hash to `true` (`twoFactor.recoveryCodes`), so one code is removed by
 * its own path under a condition that it is still there; the domain sees the hashes as a list.
 */
const storedTwoFactor = (twoFactor: TwoFactor): Record<string, unknown> => {
  const { recoveryCodes, ...rest } = twoFactor;
  return { ...rest, recoveryCodes: Object.fromEntries((recoveryCodes ?? []).map((hash) => [hash, true])) };
};

const twoFactorOf = (stored: Record<string, unknown>): TwoFactor => {
  const codes = stored['recoveryCodes'];
  return {
    ...(stored as unknown as TwoFactor),
    recoveryCodes: typeof codes === 'object' && codes !== null ? Object.keys(codes).sort() : [],
  };
};

/** Items written before revisions existed read as revision 0. */
const toUser = (item: Record<string, unknown>): User => {
  const user = stripKeys<User>(item);
  return {
    ...user,
    ...(typeof item['twoFactor'] === 'object' && item['twoFactor'] !== null
      ? { twoFactor: twoFactorOf(item['twoFactor'] as Record<string, unknown>) }
      : {}),
    revision: typeof item['revision'] === 'number' ? item['revision'] : 0,
  };
};

/** The condition that the stored user is still at the revision read (items written before revisions had none). */
const atRevision = (user: User): string =>
  user.revision === 0 ? '(attribute_not_exists(#revision) OR #revision = :seen)' : '#revision = :seen';

/** The admin-editable fields as stored attribute names. */
const CHANGE_ATTRIBUTES: Readonly<Record<keyof UserChanges, string>> = {
  displayName: 'displayName',
  status: 'status',
  roles: 'roles',
  tenantId: 'tenantId',
};

export class DynamoUserRepository implements UserRepository, UserDirectory, LinkedUsers {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(user: User): Promise<void> {
    const link = user.identityLink ?? undefined;
    const claim = (key: { pk: string; sk: string }) => ({
      Put: {
        TableName: this.tableName,
        Item: { ...key, user_id: user.id },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    });
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.tableName,
                Item: {
                  ...keys.user(user.id),
                  ...keys.usersIndex(user.createdAt, user.id),
                  type: 'user',
                  ...user,
                  twoFactor: storedTwoFactor(user.twoFactor),
                  ...encryptionIndex('user', user, keys.user(user.id)),
                },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            claim(keys.userEmail(user.email)),
            claim(keys.userName(user.username)),
            claim(keys.shortId('user', user.shortId)),
            // A user of a tenant is one of its references: the tenant cannot be deleted under it (409).
            ...(user.tenantId === null ? [] : [tenantReference(this.tableName, user.tenantId, 1)]),
            // A user provisioned by an identity provider is linked to it in the same transaction.
            ...(link === undefined ? [] : linkItems(this.tableName, link, user.id, 1)),
          ],
        }),
      );
    } catch (error) {
      if ((error as Error).name !== 'TransactionCanceledException') throw error;
      const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
      if (reasons[1]?.Code === 'ConditionalCheckFailed')
        throw new ConflictError('A user with this email already exists.', { field: 'email' });
      if (reasons[2]?.Code === 'ConditionalCheckFailed')
        throw new ConflictError('A user with this username already exists.', { field: 'username' });
      if (user.tenantId !== null && reasons[4]?.Code === 'ConditionalCheckFailed')
        throw ValidationError.field('tenant_id', 'The tenant does not exist.');
      const linkAt = user.tenantId === null ? 4 : 5;
      if (link !== undefined && reasons[linkAt]?.Code === 'ConditionalCheckFailed')
        throw new ConflictError('This identity is linked to another user already.', { field: 'identity_provider' });
      if (link !== undefined && reasons[linkAt + 1]?.Code === 'ConditionalCheckFailed')
        throw new ConflictError('The identity provider was deleted meanwhile.', { field: 'identity_provider' });
      throw new ConflictError('The user could not be created; try again.');
    }
  }

  async get(id: string): Promise<User | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.user(id), ConsistentRead: true }),
    );
    return Item === undefined ? undefined : toUser(Item);
  }

  async findByEmail(email: string): Promise<User | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.userEmail(email), ConsistentRead: true }),
    );
    return Item === undefined ? undefined : this.get(String(Item['user_id']));
  }

  async any(): Promise<boolean> {
    const { Items } = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :users',
        ExpressionAttributeValues: { ':users': partitions.users },
        Limit: 1,
      }),
    );
    return (Items ?? []).length > 0;
  }

  async find(idOrShortId: string): Promise<User | undefined> {
    if (UUID.test(idOrShortId)) return this.get(idOrShortId);
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.shortId('user', idOrShortId) }),
    );
    return Item === undefined ? undefined : this.get(String(Item['user_id']));
  }

  async update(previous: User, changes: UserChanges, at: Date, unlink?: IdentityLink): Promise<boolean> {
    const names: Record<string, string> = { '#revision': 'revision' };
    const values: Record<string, unknown> = { ':seen': previous.revision, ':one': 1, ':at': at.toISOString() };
    const sets = ['updatedAt = :at'];
    for (const [field, attribute] of Object.entries(CHANGE_ATTRIBUTES) as [keyof UserChanges, string][]) {
      if (!(field in changes)) continue;
      names[`#${field}`] = attribute;
      values[`:${field}`] = changes[field];
      sets.push(`#${field} = :${field}`);
    }
    if (unlink !== undefined) {
      sets.push('identityLink = :noLink', 'mappedRoles = :noRoles');
      Object.assign(values, { ':noLink': null, ':noRoles': [] });
    }
    const update = {
      TableName: this.tableName,
      Key: keys.user(previous.id),
      UpdateExpression: `SET ${sets.join(', ')} ADD #revision :one`,
      ConditionExpression:
        previous.revision === 0
          ? 'attribute_exists(pk) AND (attribute_not_exists(#revision) OR #revision = :seen)'
          : 'attribute_exists(pk) AND #revision = :seen',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    };
    const moved = changes.tenantId !== undefined && changes.tenantId !== previous.tenantId;
    if (!moved && unlink === undefined) return conditionally(this.db.send(new UpdateCommand(update)));
    // Moving to another tenant moves the reference with it, and an unlink frees the subject and counts it off the
    // provider, in the same transaction.
    const references = moved
      ? [
          ...(previous.tenantId === null ? [] : [tenantReference(this.tableName, previous.tenantId, -1)]),
          ...(changes.tenantId === null || changes.tenantId === undefined
            ? []
            : [tenantReference(this.tableName, changes.tenantId, 1)]),
        ]
      : [];
    const unlinking = unlink === undefined ? [] : linkItems(this.tableName, unlink, previous.id, -1);
    try {
      await this.db.send(
        new TransactWriteCommand({ TransactItems: [{ Update: update }, ...references, ...unlinking] }),
      );
      return true;
    } catch (error) {
      if ((error as Error).name !== 'TransactionCanceledException') throw error;
      if (failedAt(error, 0)) return false;
      if (references.length > 0 && failedAt(error, references.length))
        throw ValidationError.field('tenant_id', 'The tenant does not exist.');
      throw error;
    }
  }

  async delete(user: User): Promise<void> {
    await this.db.send(
      new TransactWriteCommand({
        TransactItems: [
          ...[
            keys.user(user.id),
            keys.userEmail(user.email),
            keys.userName(user.username),
            keys.shortId('user', user.shortId),
          ].map((Key) => ({
            Delete: { TableName: this.tableName, Key },
          })),
          ...(user.tenantId === null ? [] : [tenantReference(this.tableName, user.tenantId, -1)]),
          ...(user.identityLink === undefined || user.identityLink === null
            ? []
            : linkItems(this.tableName, user.identityLink, user.id, -1)),
        ],
      }),
    );
  }

  async findByLink(providerId: string, subject: string): Promise<User | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.ssoLink(providerId, subject), ConsistentRead: true }),
    );
    return Item === undefined ? undefined : this.get(String(Item['user_id']));
  }

  async link(user: User, link: IdentityLink, at: Date): Promise<boolean> {
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.tableName,
                Key: keys.user(user.id),
                UpdateExpression: 'SET identityLink = :link, updatedAt = :at ADD #revision :one',
                ConditionExpression: `attribute_exists(pk) AND ${atRevision(user)} AND (attribute_not_exists(identityLink) OR identityLink = :null)`,
                ExpressionAttributeNames: { '#revision': 'revision' },
                ExpressionAttributeValues: {
                  ':link': link,
                  ':at': at.toISOString(),
                  ':one': 1,
                  ':seen': user.revision,
                  ':null': null,
                },
              },
            },
            ...linkItems(this.tableName, link, user.id, 1),
          ],
        }),
      );
      return true;
    } catch (error) {
      if ((error as Error).name === 'TransactionCanceledException') return false;
      throw error;
    }
  }

  async applySignIn(user: User, changes: SignInChanges, at: Date): Promise<boolean> {
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.user(user.id),
          UpdateExpression:
            'SET #roles = :roles, mappedRoles = :mapped, identityLink = :link, updatedAt = :at ADD #revision :one',
          ConditionExpression: `attribute_exists(pk) AND ${atRevision(user)}`,
          ExpressionAttributeNames: { '#roles': 'roles', '#revision': 'revision' },
          ExpressionAttributeValues: {
            ':roles': changes.roles,
            ':mapped': changes.mappedRoles,
            ':link': changes.identityLink,
            ':at': at.toISOString(),
            ':one': 1,
            ':seen': user.revision,
          },
        }),
      ),
    );
  }

  async listAll(): Promise<readonly User[]> {
    const items = await queryAll(this.db, {
      TableName: this.tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :users',
      ExpressionAttributeValues: { ':users': partitions.users },
    });
    return items.map(toUser);
  }

  async replaceRoles(id: string, roles: readonly string[], at: Date, mappedRoles?: readonly string[]): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: keys.user(id),
        UpdateExpression: `SET #roles = :roles, ${mappedRoles === undefined ? '' : 'mappedRoles = :mapped, '}updatedAt = :at ADD revision :one`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#roles': 'roles' },
        ExpressionAttributeValues: {
          ':roles': roles,
          ':at': at.toISOString(),
          ':one': 1,
          ...(mappedRoles === undefined ? {} : { ':mapped': mappedRoles }),
        },
      }),
    );
  }

  async recordLogin(id: string, at: Date): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: keys.user(id),
        UpdateExpression: 'SET lastLoginAt = :at ADD revision :one',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':at': at.toISOString(), ':one': 1 },
      }),
    );
  }

  async setTwoFactor(id: string, next: TwoFactor, expected: Pick<TwoFactor, 'enabled' | 'lastStep'>): Promise<boolean> {
    // The secret's entry in the encryption index moves with it (added, changed or removed in the same write).
    const index = encryptionIndexUpdate('user', keys.user(id), { id, twoFactor: next });
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.user(id),
          UpdateExpression: `SET twoFactor = :next${index.set ? `, ${index.set}` : ''} ADD revision :one${index.remove ? ` REMOVE ${index.remove}` : ''}`,
          ConditionExpression:
            'attribute_exists(pk) AND twoFactor.enabled = :enabled AND twoFactor.lastStep = :lastStep',
          ExpressionAttributeValues: {
            ':next': storedTwoFactor(next),
            ':enabled': expected.enabled,
            ':lastStep': expected.lastStep,
            ':one': 1,
            ...index.values,
          },
        }),
      ),
    );
  }

  async acceptTwoFactorStep(id: string, step: number): Promise<boolean> {
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.user(id),
          UpdateExpression: 'SET twoFactor.lastStep = :step ADD revision :one',
          ConditionExpression:
            'attribute_exists(pk) AND (attribute_type(twoFactor.lastStep, :null) OR twoFactor.lastStep < :step)',
          ExpressionAttributeValues: { ':step': step, ':null': 'NULL', ':one': 1 },
        }),
      ),
    );
  }

  async useRecoveryCode(id: string, codeHash: string): Promise<boolean> {
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.user(id),
          UpdateExpression: 'REMOVE twoFactor.recoveryCodes.#code ADD revision :one',
          ConditionExpression:
            'attribute_exists(pk) AND twoFactor.enabled = :on AND attribute_exists(twoFactor.recoveryCodes.#code)',
          ExpressionAttributeNames: { '#code': codeHash },
          ExpressionAttributeValues: { ':on': true, ':one': 1 },
        }),
      ),
    );
  }

  async setPassword(id: string, hash: string, expected: string, at: Date): Promise<boolean> {
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.user(id),
          // One write: a password changed with the old sessions still valid must never be stored.
          UpdateExpression: 'SET passwordHash = :hash, tokensValidAfter = :at, updatedAt = :iso ADD revision :one',
          ConditionExpression: 'attribute_exists(pk) AND passwordHash = :expected AND tokensValidAfter < :at',
          ExpressionAttributeValues: {
            ':hash': hash,
            ':expected': expected,
            ':at': at.getTime(),
            ':iso': at.toISOString(),
            ':one': 1,
          },
        }),
      ),
    );
  }

  async revokeTokens(id: string, at: Date): Promise<void> {
    // Never moves backwards: a slow, older logout cannot re-validate tokens a newer one revoked.
    await conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.user(id),
          UpdateExpression: 'SET tokensValidAfter = :at, updatedAt = :iso ADD revision :one',
          ConditionExpression: 'attribute_exists(pk) AND tokensValidAfter < :at',
          ExpressionAttributeValues: { ':at': at.getTime(), ':iso': at.toISOString(), ':one': 1 },
        }),
      ),
    );
  }
}
