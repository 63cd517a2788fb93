// IdGenerator adapter: a random UUID plus a SqId of the entity's counter, incremented atomically.
import { randomUUID } from 'node:crypto';
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import Sqids from 'sqids';
import type { IdGenerator, NewId } from '../../domain/shared/ports.js';
import { keys } from './keys.js';

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
    return { id: randomUUID(), shortId: this.#sqids.encode([value]) };
  }

  /** The counter value a short id encodes, or undefined when it is not one of ours. */
  decode(shortId: string): number | undefined {
    const [value, ...rest] = this.#sqids.decode(shortId);
    // Sqids decodes some foreign strings too; only a canonical encoding of one number is ours.
    if (value === undefined || rest.length > 0 || this.#sqids.encode([value]) !== shortId) return undefined;
    return value;
  }
}
