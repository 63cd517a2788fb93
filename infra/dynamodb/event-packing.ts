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

/** Events packed together as they come, in order (as packSizes cuts them): the packs so far, and the last one's fill. */
interface Packing {
  readonly packs: number;
  readonly count: number;
  readonly bytes: number;
}

const NO_PACKS: Packing = { packs: 0, count: 0, bytes: 0 };

/** Whether an event of `size` bytes starts a new pack after one of `count` events and `bytes` (or none: count 0). */
const opensPack = (count: number, bytes: number, size: number): boolean =>
  count === 0 || count === PACK_EVENTS || bytes + size > PACK_BYTES;

/** `packing` with events of these sizes added after it. */
const packedWith = (packing: Packing, sizes: readonly number[]): Packing => {
  let { packs, count, bytes } = packing;
  for (const size of sizes) {
    if (opensPack(count, bytes, size)) {
      packs += 1;
      count = 0;
      bytes = 0;
    }
    count += 1;
    bytes += size;
  }
  return { packs, count, bytes };
};

/**
 * Keyed groups cut into transactions, order kept: with the head, at most 100 items (a marker per group, and all the
 * groups' events packed together: packs are shared across groups) and about 3 MB.
 */
export const groupBatches = (
  groups: readonly { readonly sizes: readonly number[]; readonly size: number }[],
): number[][] => {
  const batches: number[][] = [];
  let current: number[] = [];
  let packing = NO_PACKS;
  let bytes = 0;
  groups.forEach((group, index) => {
    const items = 1 + current.length + 1 + packedWith(packing, group.sizes).packs;
    if (
      current.length > 0 &&
      (items > MAX_EVENTS_PER_TRANSACTION + 1 || bytes + group.size > MAX_BYTES_PER_TRANSACTION)
    ) {
      batches.push(current);
      current = [];
      packing = NO_PACKS;
      bytes = 0;
    }
    current.push(index);
    packing = packedWith(packing, group.sizes);
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
    if (count > 0 && opensPack(count, bytes, size)) {
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

/**
 * Parked groups in the order to merge them: as parked (the sort key starts with the time), each key once; a
 * transaction holds the head, a delete per parked item, a marker per group appended, and the appended groups' events
 * packed together.
 */
export const mergeBatch = (
  parked: readonly { readonly key: string; readonly sizes: readonly number[]; readonly size: number }[],
  marked: ReadonlySet<string>,
): { index: number; append: boolean }[] => {
  const batch: { index: number; append: boolean }[] = [];
  const keysInBatch = new Set<string>();
  let packing = NO_PACKS;
  let items = 1; // the head, then deletes and markers
  let bytes = 0;
  for (const [index, group] of parked.entries()) {
    const append = !marked.has(group.key) && !keysInBatch.has(group.key);
    const more = append ? 2 : 1; // delete and marker; or only the delete of a duplicate
    const size = append ? group.size : 100;
    const total = items + more + (append ? packedWith(packing, group.sizes) : packing).packs;
    if (batch.length > 0 && (total > MAX_EVENTS_PER_TRANSACTION + 1 || bytes + size > MAX_BYTES_PER_TRANSACTION)) break;
    batch.push({ index, append });
    if (append) {
      keysInBatch.add(group.key);
      packing = packedWith(packing, group.sizes);
    }
    items += more;
    bytes += size;
  }
  return batch;
};
