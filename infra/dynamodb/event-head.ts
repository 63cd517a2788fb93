// The head and the markers of a deployment's event log (see deployment-event-store.ts): reading the head, the
// transaction item that moves it, the put of a keyed group's marker, and the batch read of markers. Shared by the
// store's appends and by the merge of parked groups (event-parking.ts).
import { BatchGetCommand, GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { keys, type Key } from './keys.js';
import type { TransactItem } from './transactions.js';

/** A group's marker: where its events start, and the parked item it came from (when it was merged). */
export interface Marker {
  readonly firstSeq: number;
  readonly parked?: string;
}

/** The head: the last seq written and the time of that event (absent on a head written before times were kept). */
export interface Head {
  readonly seq: number;
  readonly at: string | undefined;
}

/** The head (a consistent read). */
export const readHead = async (db: DynamoDBDocumentClient, tableName: string, deploymentId: string): Promise<Head> => {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: keys.deploymentEventsHead(deploymentId), ConsistentRead: true }),
  );
  return Item === undefined ? { seq: 0, at: undefined } : headOf(Item);
};

const headOf = (item: Record<string, unknown>): Head => ({
  seq: Number(item['seq'] ?? 0),
  at: typeof item['at'] === 'string' ? item['at'] : undefined,
});

/** The transaction item that moves a deployment's head from the seq a writer read (`seen`) to `next`. */
export const moveHeadItem = (
  tableName: string,
  deploymentId: string,
  seen: number,
  next: number,
  at: string | undefined,
): TransactItem => ({
  Update: {
    TableName: tableName,
    Key: keys.deploymentEventsHead(deploymentId),
    UpdateExpression: at === undefined ? 'SET #seq = :next' : 'SET #seq = :next, #at = :at',
    ConditionExpression: 'attribute_not_exists(#seq) OR #seq = :seen',
    ExpressionAttributeNames: { '#seq': 'seq', ...(at === undefined ? {} : { '#at': 'at' }) },
    ExpressionAttributeValues: { ':seen': seen, ':next': next, ...(at === undefined ? {} : { ':at': at }) },
  },
});

/** The put of a group's marker (absent before): where its events start, and the parked item it came from. */
export const markerItem = (
  tableName: string,
  deploymentId: string,
  groupKey: string,
  firstSeq: number,
  parked?: string,
): TransactItem => ({
  Put: {
    TableName: tableName,
    Item: {
      ...keys.deploymentEventsMarker(deploymentId, groupKey),
      type: 'deployment_event_marker',
      groupKey,
      firstSeq,
      ...(parked === undefined ? {} : { parked }),
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

/** The markers of the keys that have one (batch reads of at most 100 keys), by key. */
export const readMarkers = async (
  db: DynamoDBDocumentClient,
  tableName: string,
  deploymentId: string,
  groupKeys: readonly string[],
): Promise<Map<string, Marker>> => (await readHeadAndMarkers(db, tableName, deploymentId, groupKeys, false)).markers;

/**
 * The head and the markers of the keys that have one, in the same batch read (a keyed append needs both before its
 * transaction: one round trip instead of two). The head is read consistently, as readHead does.
 */
export function readHeadAndMarkers(
  db: DynamoDBDocumentClient,
  tableName: string,
  deploymentId: string,
  groupKeys: readonly string[],
): Promise<{ head: Head; markers: Map<string, Marker> }>;
export function readHeadAndMarkers(
  db: DynamoDBDocumentClient,
  tableName: string,
  deploymentId: string,
  groupKeys: readonly string[],
  withHead: false,
): Promise<{ head: undefined; markers: Map<string, Marker> }>;
export async function readHeadAndMarkers(
  db: DynamoDBDocumentClient,
  tableName: string,
  deploymentId: string,
  groupKeys: readonly string[],
  withHead = true,
): Promise<{ head: Head | undefined; markers: Map<string, Marker> }> {
  const found = new Map<string, Marker>();
  const headKey = keys.deploymentEventsHead(deploymentId);
  let head: Head | undefined = withHead ? { seq: 0, at: undefined } : undefined;
  const markerKeys = groupKeys.map((k) => keys.deploymentEventsMarker(deploymentId, k));
  // The head rides the first batch.
  const all = withHead ? [headKey, ...markerKeys] : markerKeys;
  const batches: Key[][] = [];
  for (let i = 0; i < all.length; i += 100) batches.push(all.slice(i, i + 100));
  for (const batch of batches) {
    let request: NonNullable<ConstructorParameters<typeof BatchGetCommand>[0]['RequestItems']> | undefined = {
      [tableName]: { Keys: batch, ConsistentRead: true },
    };
    while (request !== undefined && Object.keys(request).length > 0) {
      const answer = await db.send(new BatchGetCommand({ RequestItems: request }));
      for (const item of answer.Responses?.[tableName] ?? []) {
        if (item['sk'] === headKey.sk && item['pk'] === headKey.pk) head = headOf(item);
        else
          found.set(String(item['groupKey']), {
            firstSeq: Number(item['firstSeq']),
            ...(typeof item['parked'] === 'string' ? { parked: item['parked'] } : {}),
          });
      }
      request = answer.UnprocessedKeys as typeof request;
    }
  }
  return { head, markers: found };
}
