// ActionRepository on the single table. An action's partition ACTION#<id> holds the action item (sk ACTION) and
// its versions (sk VERSION#<version>), so one Query reads an action with every version. Creating an action
// writes, in one transaction, the action, its first version, a claim on its slug within its scope, its short-id
// alias and a reference to its tenant. Version changes and the delete are conditioned on the action's
// `revision` (and the delete on `refCount = 0`), which sequence writes move (sequence-repository.ts).
import { TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import { ConcurrentChangeError } from '../../domain/catalog/errors.js';
import type { ActionRepository, VersionChange } from '../../domain/catalog/ports.js';
import { newestFirst } from '../../domain/catalog/resolve.js';
import type { Action, ActionVersion, ActionWithVersions } from '../../domain/catalog/types.js';
import { aliasItem, resolveId } from './aliases.js';
import { isConditionFailure } from './conditional.js';
import { keys, partitions, prefixes } from './keys.js';
import { queryAll } from './query-all.js';
import { listPartition } from './records.js';
import { failedAt, tenantReference, TRANSACTION_LIMIT, type TransactItem } from './transactions.js';

const ACTION_SK = keys.action('x').sk;

const toAction = (item: Record<string, unknown>): Action => ({
  id: String(item['id']),
  shortId: String(item['shortId']),
  slug: String(item['slug']),
  name: String(item['name']),
  description: (item['description'] as string | null | undefined) ?? null,
  tenantId: (item['tenantId'] as string | null | undefined) ?? null,
  latestVersion: String(item['latestVersion']),
  versionCount: Number(item['versionCount'] ?? 0),
  revision: Number(item['revision'] ?? 0),
  refCount: Number(item['refCount'] ?? 0),
  createdAt: String(item['createdAt']),
  updatedAt: String(item['updatedAt']),
});

const toVersion = (item: Record<string, unknown>): ActionVersion => ({
  id: String(item['id']),
  actionId: String(item['actionId']),
  version: String(item['version']),
  script: String(item['script']),
  interpreter: item['interpreter'] as ActionVersion['interpreter'],
  rollbackScript: (item['rollbackScript'] as string | null | undefined) ?? null,
  timeoutSeconds:
    item['timeoutSeconds'] === null || item['timeoutSeconds'] === undefined ? null : Number(item['timeoutSeconds']),
  variables: (item['variables'] as ActionVersion['variables'] | undefined) ?? [],
  changelog: (item['changelog'] as string | null | undefined) ?? null,
  createdAt: String(item['createdAt']),
  createdBy: String(item['createdBy']),
});

export class DynamoActionRepository implements ActionRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async listAll(): Promise<readonly Action[]> {
    return listPartition(this.db, this.tableName, 'gsi1', partitions.actions, toAction);
  }

  async find(idOrShortId: string): Promise<ActionWithVersions | undefined> {
    const id = await resolveId(this.db, this.tableName, 'action', idOrShortId);
    if (id === undefined) return undefined;
    const items = await queryAll(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.action(id).pk },
      ConsistentRead: true,
    });
    const action = items.find((i) => i['sk'] === ACTION_SK);
    // Versions without their action are leftovers of a delete still in progress: not an action.
    if (action === undefined) return undefined;
    return {
      action: toAction(action),
      versions: newestFirst(items.filter((i) => String(i['sk']).startsWith(prefixes.actionVersion)).map(toVersion)),
    };
  }

  async create(action: Action, first: ActionVersion): Promise<void> {
    const items: TransactItem[] = [
      {
        Put: {
          TableName: this.tableName,
          Item: this.#actionItem(action),
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          TableName: this.tableName,
          Item: this.#versionItem(first),
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          TableName: this.tableName,
          Item: { ...keys.actionSlug(action.tenantId, action.slug), action_id: action.id },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          TableName: this.tableName,
          Item: aliasItem('action', action.shortId, action.id),
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      ...(action.tenantId === null ? [] : [tenantReference(this.tableName, action.tenantId, 1)]),
    ];
    try {
      await this.db.send(new TransactWriteCommand({ TransactItems: items }));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      if (failedAt(error, 2)) {
        const scope = action.tenantId === null ? 'the global catalog' : 'this tenant';
        throw new ConflictError(`An action with slug '${action.slug}' already exists in ${scope}.`, { field: 'slug' });
      }
      if (failedAt(error, 4)) throw ValidationError.field('tenant_id', `There is no tenant '${action.tenantId}'.`);
      throw new ConflictError('The action could not be created; try again.');
    }
  }

  async rename(action: Action, change: Pick<Action, 'name' | 'description' | 'updatedAt'>): Promise<Action> {
    try {
      const { Attributes } = await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.action(action.id),
          UpdateExpression: 'SET #name = :name, #description = :description, updatedAt = :at',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#name': 'name', '#description': 'description' },
          ExpressionAttributeValues: {
            ':name': change.name,
            ':description': change.description,
            ':at': change.updatedAt,
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return toAction(Attributes ?? {});
    } catch (error) {
      if (isConditionFailure(error)) throw new NotFoundError('Action', action.id);
      throw error;
    }
  }

  async changeVersions(previous: Action, next: Action, change: VersionChange): Promise<void> {
    const put = (version: ActionVersion, condition: string): TransactItem => ({
      Put: { TableName: this.tableName, Item: this.#versionItem(version), ConditionExpression: condition },
    });
    const remove = (version: ActionVersion): TransactItem => ({
      Delete: {
        TableName: this.tableName,
        Key: keys.actionVersion(version.actionId, version.version),
        ConditionExpression: 'attribute_exists(pk)',
      },
    });
    const versionItems: TransactItem[] =
      change.kind === 'create'
        ? [put(change.version, 'attribute_not_exists(pk)')]
        : change.kind === 'delete'
          ? [remove(change.version)]
          : change.previous.version === change.next.version
            ? [put(change.next, 'attribute_exists(pk)')]
            : [remove(change.previous), put(change.next, 'attribute_not_exists(pk)')];
    await this.#transact(
      [
        {
          Update: {
            TableName: this.tableName,
            Key: keys.action(previous.id),
            UpdateExpression: 'SET latestVersion = :latest, versionCount = :count, updatedAt = :at, revision = :next',
            ConditionExpression: 'revision = :seen',
            ExpressionAttributeValues: {
              ':latest': next.latestVersion,
              ':count': next.versionCount,
              ':at': next.updatedAt,
              ':next': next.revision,
              ':seen': previous.revision,
            },
          },
        },
        ...versionItems,
      ],
      previous,
    );
  }

  async delete(action: Action, versions: readonly ActionVersion[]): Promise<void> {
    const versionKeys = versions.map((v) => keys.actionVersion(action.id, v.version));
    const head: TransactItem[] = [
      {
        Delete: {
          TableName: this.tableName,
          Key: keys.action(action.id),
          ConditionExpression: 'revision = :seen AND (attribute_not_exists(refCount) OR refCount = :zero)',
          ExpressionAttributeValues: { ':seen': action.revision, ':zero': 0 },
        },
      },
      { Delete: { TableName: this.tableName, Key: keys.actionSlug(action.tenantId, action.slug) } },
      { Delete: { TableName: this.tableName, Key: keys.shortId('action', action.shortId) } },
      ...(action.tenantId === null ? [] : [tenantReference(this.tableName, action.tenantId, -1)]),
    ];
    const room = TRANSACTION_LIMIT - head.length;
    const deleteKey = (Key: { pk: string; sk: string }): TransactItem => ({
      Delete: { TableName: this.tableName, Key },
    });
    await this.#transact([...head, ...versionKeys.slice(0, room).map(deleteKey)], action);
    // The action is gone (find no longer sees it); versions past one transaction's worth follow.
    for (let start = room; start < versionKeys.length; start += TRANSACTION_LIMIT) {
      await this.db.send(
        new TransactWriteCommand({ TransactItems: versionKeys.slice(start, start + TRANSACTION_LIMIT).map(deleteKey) }),
      );
    }
  }

  #actionItem(action: Action) {
    return { ...keys.action(action.id), ...keys.actionsIndex(action.createdAt, action.id), type: 'action', ...action };
  }

  #versionItem(version: ActionVersion) {
    return { ...keys.actionVersion(version.actionId, version.version), type: 'action_version', ...version };
  }

  async #transact(items: TransactItem[], action: Action): Promise<void> {
    try {
      await this.db.send(new TransactWriteCommand({ TransactItems: items }));
    } catch (error) {
      if (isConditionFailure(error)) throw new ConcurrentChangeError(`Action '${action.slug}'`);
      throw error;
    }
  }
}
