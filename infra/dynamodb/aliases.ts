// Short-id aliases: every record with a short id also has an item SHORTID#<entity>#<short id> -> {id}, written in
// the same transaction as the record, so a path id may be either the UUID or the short id.
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { keys } from './keys.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The alias item to Put (with `attribute_not_exists(pk)`) beside a new record. */
export const aliasItem = (entity: string, shortId: string, id: string) => ({ ...keys.shortId(entity, shortId), id });

/** A UUID as is; a short id through its alias; undefined when the alias does not exist. */
export const resolveId = async (
  db: DynamoDBDocumentClient,
  tableName: string,
  entity: string,
  idOrShortId: string,
): Promise<string | undefined> => {
  if (UUID.test(idOrShortId)) return idOrShortId.toLowerCase();
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: keys.shortId(entity, idOrShortId) }));
  return Item === undefined ? undefined : String(Item['id']);
};
