// A global secondary index is updated after the write (eventually consistent; DynamoDB Local updates it with the
// write, so only the cloud shows this): an item created a moment ago may not be found through one yet. A lookup by
// id through an index (an API key or an enrollment token revoked right after its creation) looks again before it
// answers "not found": the usual lag is well under a second.
import { setTimeout as pause } from 'node:timers/promises';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { listPartition, type Item } from './records.js';

/** Waits between the lookups of an item not found (ms): about a second in all. */
export const INDEX_LAG_WAITS_MS = [200, 800] as const;

/** `find` (a lookup through an index), tried again after each of `waitsMs` while it finds nothing. */
export const foundDespiteIndexLag = async <T>(
  find: () => Promise<T | undefined>,
  waitsMs: readonly number[] = INDEX_LAG_WAITS_MS,
): Promise<T | undefined> => {
  for (const wait of [0, ...waitsMs]) {
    if (wait > 0) await pause(wait);
    const found = await find();
    if (found !== undefined) return found;
  }
  return undefined;
};

/** The item whose gsi2 partition key is `gsi2pk` (a lookup by id), mapped; looked for again on a miss. */
export const findOnGsi2 = <T>(
  db: DynamoDBDocumentClient,
  tableName: string,
  gsi2pk: string,
  map: (item: Item) => T,
): Promise<T | undefined> =>
  foundDespiteIndexLag(async () => (await listPartition(db, tableName, 'gsi2', gsi2pk, map))[0]);
