// How a deployment's events are laid out in the table (see deployment-event-store.ts): events prepared and dated,
// packed into items of up to 100 events and about 300 KB, the items and keyed groups cut into transactions, and
// parked groups ordered for a merge. Pure functions; the store does the reads and writes.
import {
  boundedEvent,
  forwardInTime,
  redatedEvent,
  type NewEvent,
  type StoredEvent,
} from '../../domain/deployments/events.js';
import { keys } from './keys.js';

/** DynamoDB allows 100 items per transaction; one is the head. */
export const MAX_EVENTS_PER_TRANSACTION = 99;
/** Events per item, and bytes per item (DynamoDB's limit is 400 KB; one event is at most 64 K characters). */
const PACK_EVENTS = 100;
const PACK_BYTES = 300_000;
/** A transaction carries at most 4 MB; keep well under it (the estimate counts JSON characters). */
export const MAX_BYTES_PER_TRANSACTION = 3_000_000;

const toStored = (item: Record<string, unknown>): StoredEvent => ({
  seq: Number(item['seq']),
  at: String(item['at']),
  event: JSON.parse(String(item['body'])) as StoredEvent['event'],
});

/** Splits an append into transactions: at most 99 events and about 3 MB each, order kept. */
export const transactionBatches = (events: readonly { readonly size: number }[]): number[][] => {
  const batches: number[][] = [];
  let current: number[] = [];
  let bytes = 0;
  events.forEach((event, index) => {
    if (
      current.length > 0 &&
      (current.length === MAX_EVENTS_PER_TRANSACTION || bytes + event.size > MAX_BYTES_PER_TRANSACTION)
    ) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(index);
    bytes += event.size;
  });
  if (current.length > 0) batches.push(current);
  return batches;
};

/** Keyed groups packed into transactions: with the head, at most 100 items (a marker + events per group) and about 3 MB. */
export const groupBatches = (groups: readonly { readonly events: number; readonly size: number }[]): number[][] => {
  const batches: number[][] = [];
  let current: number[] = [];
  let items = 1;
  let bytes = 0;
  groups.forEach((group, index) => {
    if (
      current.length > 0 &&
      (items + 1 + group.events > MAX_EVENTS_PER_TRANSACTION + 1 || bytes + group.size > MAX_BYTES_PER_TRANSACTION)
    ) {
      batches.push(current);
      current = [];
      items = 1;
      bytes = 0;
    }
    current.push(index);
    items += 1 + group.events;
    bytes += group.size;
  });
  if (current.length > 0) batches.push(current);
  return batches;
};

export const prepare = (e: NewEvent) => {
  const body = JSON.stringify(boundedEvent(e.event));
  return { at: e.at, body, size: Buffer.byteLength(body) + 40 };
};

export type Prepared = ReturnType<typeof prepare>;

/** A prepared event moved later (its log line's timestamp too): seq order is time order. */
const redate = <E extends Prepared>(e: E, at: string): E => ({
  ...e,
  ...prepare({ at, event: redatedEvent(JSON.parse(e.body) as NewEvent['event'], at) }),
});
export const dated = <E extends Prepared>(after: string | undefined, events: readonly E[]): E[] =>
  forwardInTime(after, events, redate);

export const lastAt = (events: readonly { readonly at: string }[], before: string | undefined): string | undefined =>
  events.at(-1)?.at ?? before;

/** Consecutive events cut into items: at most 100 events and about 300 KB each (the count of events per item). */
export const packSizes = (sizes: readonly number[]): number[] => {
  const packs: number[] = [];
  let count = 0;
  let bytes = 0;
  for (const size of sizes) {
    if (count > 0 && (count === PACK_EVENTS || bytes + size > PACK_BYTES)) {
      packs.push(count);
      count = 0;
      bytes = 0;
    }
    count += 1;
    bytes += size;
  }
  if (count > 0) packs.push(count);
  return packs;
};

export const packCount = (events: readonly Prepared[]): number => packSizes(events.map((e) => e.size)).length;

/** The items of events numbered from `firstSeq`: one per pack, its sort key the pack's last seq. */
export const eventItems = (tableName: string, deploymentId: string, firstSeq: number, events: readonly Prepared[]) => {
  const items: { Put: { TableName: string; Item: Record<string, unknown>; ConditionExpression: string } }[] = [];
  let seq = firstSeq;
  let offset = 0;
  for (const count of packSizes(events.map((e) => e.size))) {
    const pack = events.slice(offset, offset + count);
    items.push({
      Put: {
        TableName: tableName,
        Item: {
          ...keys.deploymentEvent(deploymentId, seq + count - 1),
          type: 'deployment_event',
          seq,
          events: pack.map((e) => ({ at: e.at, body: e.body })),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    });
    seq += count;
    offset += count;
  }
  return items;
};

/** The events of one item: a pack, or a single event written before packing. */
export const eventsOf = (item: Record<string, unknown>): StoredEvent[] => {
  const first = Number(item['seq']);
  const packed = item['events'] as { at: string; body: string }[] | undefined;
  if (packed === undefined) return [toStored(item)];
  return packed.map((e, i) => ({
    seq: first + i,
    at: e.at,
    event: JSON.parse(e.body) as StoredEvent['event'],
  }));
};

export type PreparedGroup = { readonly key: string; readonly events: readonly Prepared[] };

export const groupSize = (g: PreparedGroup): number => g.events.reduce((n, e) => n + e.size, 100);

/** A parked group as read back for a merge. */
export interface Parked extends PreparedGroup {
  readonly sk: string;
}

/** Parked groups in the order to merge them: as parked (the sort key starts with the time), each key once. */
export const mergeBatch = (
  parked: readonly { readonly key: string; readonly events: number; readonly size: number }[],
  marked: ReadonlySet<string>,
): { index: number; append: boolean }[] => {
  const batch: { index: number; append: boolean }[] = [];
  const keysInBatch = new Set<string>();
  let items = 1; // the head
  let bytes = 0;
  for (const [index, group] of parked.entries()) {
    const append = !marked.has(group.key) && !keysInBatch.has(group.key);
    const more = append ? 2 + group.events : 1; // delete, marker, events; or only the delete of a duplicate
    const size = append ? group.size : 100;
    if (batch.length > 0 && (items + more > MAX_EVENTS_PER_TRANSACTION + 1 || bytes + size > MAX_BYTES_PER_TRANSACTION))
      break;
    batch.push({ index, append });
    if (append) keysInBatch.add(group.key);
    items += more;
    bytes += size;
  }
  return batch;
};
