// The change feed on gsi3 (keys.changed): every write of a deployment, pending request or target sets its entry to
// the write's time, with the tenant projected, so "what changed since T" is one query of recent entries, whatever
// the table holds. A deleted target leaves a tombstone entry (its record is gone when the reader looks).
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ChangeFeed, ChangedRecord } from '../../domain/shared/ports.js';
import { keys, type ChangedResource } from './keys.js';

/** One look reads at most this many entries (pages of it): a stream polling every second never needs more. */
const MAX_ENTRIES = 5_000;

export class DynamoChangeFeed implements ChangeFeed {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async since(resource: ChangedResource, from: string, max = MAX_ENTRIES): Promise<readonly ChangedRecord[]> {
    const limit = Math.min(max, MAX_ENTRIES);
    const entries: ChangedRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: 'gsi3',
          KeyConditionExpression: 'gsi3pk = :pk AND gsi3sk >= :from',
          ExpressionAttributeValues: { ':pk': keys.changed(resource, '', '').gsi3pk, ':from': from },
          ExclusiveStartKey: start,
          Limit: limit - entries.length,
        }),
      );
      for (const item of page.Items ?? []) {
        const sk = String(item['gsi3sk']);
        const cut = sk.lastIndexOf('#');
        entries.push({
          id: sk.slice(cut + 1),
          at: sk.slice(0, cut),
          tenantId: typeof item['tenantId'] === 'string' ? item['tenantId'] : null,
        });
      }
      start = page.LastEvaluatedKey;
    } while (start !== undefined && entries.length < limit);
    return entries;
  }
}
