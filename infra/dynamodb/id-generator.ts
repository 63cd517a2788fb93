// IdGenerator adapter: a random UUID plus a SqId of (the entity's number, the entity's counter), the counter
// incremented atomically. The entity's number makes short ids distinct across entity types: the first action,
// sequence and deployment no longer all read `snDrTH`.
import { randomUUID } from 'node:crypto';
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import Sqids from 'sqids';
import type { IdGenerator, NewId } from '../../domain/shared/ports.js';
import { keys } from './keys.js';

/** Fixed numbers of the entities (append only: a number, once used, keeps its entity). */
const ENTITY_NUMBERS: Readonly<Record<string, number>> = {
  user: 1,
  role: 2,
  api_key: 3,
  tenant: 4,
  environment: 5,
  freeze: 6,
  action: 7,
  action_version: 8,
  sequence: 9,
  solution: 10,
  target: 11,
  command: 12,
  deployment: 13,
  enrollment_token: 14,
  trigger: 15,
  oauth_client: 16,
  identity_provider: 17,
  webhook: 18,
};

/** An entity's number: fixed for the known ones, a stable number above 1000 for any other name. */
export const entityNumber = (entity: string): number => {
  const fixed = ENTITY_NUMBERS[entity];
  if (fixed !== undefined) return fixed;
  let hash = 0;
  for (const char of entity) hash = (hash * 31 + char.charCodeAt(0)) % 100_000;
  return 1000 + hash;
};

export class DynamoIdGenerator implements IdGenerator {
  readonly #sqids: Sqids;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    options: { alphabet: string; minLength: number },
  ) {
    this.#sqids = new Sqids({ alphabet: options.alphabet, minLength: options.minLength });
  }

  async next(entity: string): Promise<NewId> {
    const result = await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: keys.counter(entity),
        UpdateExpression: 'ADD #value :one',
        ExpressionAttributeNames: { '#value': 'value' },
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const value = Number(result.Attributes?.['value']);
    return { id: randomUUID(), shortId: this.#sqids.encode([entityNumber(entity), value]) };
  }

  /** The counter value a short id of `entity` encodes, or undefined when it is not one of that entity's. */
  decode(shortId: string, entity: string): number | undefined {
    const numbers = this.#sqids.decode(shortId);
    // Sqids decodes some foreign strings too; only a canonical encoding of (entity, counter) is ours.
    if (numbers.length !== 2 || numbers[0] !== entityNumber(entity) || this.#sqids.encode(numbers) !== shortId)
      return undefined;
    return numbers[1];
  }
}
