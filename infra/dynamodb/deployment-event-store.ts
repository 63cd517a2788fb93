// The events of each deployment in its own partition: a head item (sk HEAD, attribute `seq`: the last seq
// written) and the events packed into items of up to 100 consecutive events and about 300 KB (sk EVENT#<the pack's
// last seq, 10 digits>, attributes `seq` (its first) and `events`), so 5,000 lines of output are 50 items, not
// 5,000; a reader after seq N queries from EVENT#<N+1> and gets the pack holding N+1 first (items of one event with
// `seq`/`at`/`body`, written before packing, read the same way). An append is ONE transaction: the head moves from
// the seq it read to seq + n (conditioned on still being what it read) and each event is put under its seq. So
// writers are serialised per deployment: seqs are contiguous, each event is stored once, and seq N+1 is never
// committed before N. A writer that loses the race re-reads the head and tries again (bounded, with jitter).
// Keyed groups (a part of a command's output chunk) are appended at most once: a marker item (sk MARK#<key>) is put
// in the same transaction as the group's events, conditioned on being absent, and markers are read (one batch
// read) before appending, so a retry adds exactly the groups a crash lost.
// Time moves with the sequence: the head also keeps the time of the last event (`at`), and an append's events take
// at least that time (a writer whose clock read is older, or a late observer of a transition, never stores an event
// dated before the one it follows), so the order of seqs is the order of times.
// Sharded writers, one merge: keyed groups (the output of many targets' commands) first try that one transaction;
// a writer that loses the race for the head does not retry it against every other writer: it parks its groups and
// merges (event-parking.ts). Readers see one contiguous sequence.
import { setTimeout as sleep } from 'node:timers/promises';
import { QueryCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  contiguousAfter,
  type DeploymentEventStore,
  type KeyedEventAppender,
  type KeyedEventLookup,
  type KeyedEvents,
  type NewEvent,
  type StoredEvent,
} from '../../domain/deployments/events.js';
import { isConditionFailure } from './conditional.js';
import { markerItem, moveHeadItem, readHead, readHeadAndMarkers, readMarkers, type Head } from './event-head.js';
import {
  dated,
  eventItems,
  eventsOf,
  groupBatches,
  groupSize,
  lastAt,
  MAX_BYTES_PER_TRANSACTION,
  MAX_EVENTS_PER_TRANSACTION,
  mergeBatch,
  packCount,
  packSizes,
  prepare,
  transactionBatches,
  type Prepared,
  type PreparedGroup,
} from './event-packing.js';
import { EventParking, MAX_PARKED_BYTES, type MergeStats } from './event-parking.js';
import { keys, prefixes } from './keys.js';
import type { TransactItem } from './transactions.js';
// The layout's pure functions, exported here as before for the benchmarks and tests.
export { groupBatches, mergeBatch, packSizes, transactionBatches };

const MAX_ATTEMPTS = 100;
/** A head this process wrote is guessed for this long after (a command's output posts come ~every 30-100 ms). */
export const GUESS_TRUST_MS = 2_000;
/** After a guess missed (another writer is active on the deployment), no guessing for this long. */
export const GUESS_PAUSE_MS = 5_000;
/** Heads remembered at most (forgotten all at once past it: only a read more each). */
const MAX_GUESSED_HEADS = 1_000;
const LAST_SEQ = 9_999_999_999;

export interface EventStoreOptions {
  /** Attempts per transaction before giving up (each lost race re-reads the head). */
  readonly maxAttempts?: number;
}

/** What a store's keyed appends did: for the benchmarks and tests. */
export interface AppendStats extends MergeStats {
  /** Direct transactions that moved the head. */
  direct: number;
  /** Direct transactions that lost the race for the head (their groups were parked). */
  lostRaces: number;
  /** Transactions from a remembered head that found it moved (then read and written as usual). */
  missedGuesses: number;
}

/** A call of appendOnce waiting for its round of the group commit. */
interface Waiting {
  readonly groups: readonly PreparedGroup[];
  readonly resolve: (stored: readonly StoredEvent[]) => void;
  readonly reject: (error: unknown) => void;
}

export class DynamoDeploymentEventStore implements DeploymentEventStore, KeyedEventAppender, KeyedEventLookup {
  private readonly maxAttempts: number;
  /** Per deployment: the calls waiting for the next round of the group commit, and whether a round is running. */
  private readonly waiting = new Map<string, Waiting[]>();
  private readonly committing = new Set<string>();
  readonly stats: AppendStats = { direct: 0, lostRaces: 0, missedGuesses: 0, parked: 0, merges: 0, lostMerges: 0 };
  /** Parking and merging of the groups whose direct transaction lost the race for the head. */
  private readonly parking: EventParking;
  /**
   * Per deployment: the head this process's last keyed append left, and when; or, after a guess that missed, until
   * when not to guess. A command's output comes in posts one after another, most of them to the same container: the
   * next post's transaction starts from the head the last one wrote, with no read before it (its conditions refuse a
   * head that moved or a marker already there, and then the usual read and transaction follow).
   */
  private readonly heads = new Map<string, { head?: Head; at: number }>();

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    options: EventStoreOptions = {},
  ) {
    this.maxAttempts = options.maxAttempts ?? MAX_ATTEMPTS;
    this.parking = new EventParking(db, tableName, this.stats, this.maxAttempts);
  }

  async append(deploymentId: string, events: readonly NewEvent[]): Promise<readonly StoredEvent[]> {
    const prepared = events.map(prepare);
    // Packs of events, then transactions of packs; a bigger append is several transactions, each contiguous (another
    // writer's events may fall between them).
    const packs: Prepared[][] = [];
    let offset = 0;
    for (const count of packSizes(prepared.map((e) => e.size))) {
      packs.push(prepared.slice(offset, offset + count));
      offset += count;
    }
    const stored: StoredEvent[] = [];
    for (const batch of transactionBatches(packs.map((pack) => ({ size: pack.reduce((n, e) => n + e.size, 100) }))))
      stored.push(
        ...(await this.appendBatch(
          deploymentId,
          batch.flatMap((i) => packs[i]!),
        )),
      );
    return stored;
  }

  /** Where a keyed group starts: its marker (written in the transaction of its events) says, in one read. */
  async keyedSeq(deploymentId: string, key: string): Promise<number | undefined> {
    return (await readMarkers(this.db, this.tableName, deploymentId, [key])).get(key)?.firstSeq;
  }

  /**
   * Appends each keyed group at most once. Concurrent calls for one deployment in this process are committed together
   * (group commit): while one transaction is in flight the next calls wait and then share the following one, so N
   * writers of one process cost about one transaction per round instead of racing N times for the head.
   */
  async appendOnce(deploymentId: string, groups: readonly KeyedEvents[]): Promise<readonly StoredEvent[]> {
    const prepared = groups
      .filter((g) => g.events.length > 0)
      .map((g) => ({ key: g.key, events: g.events.map(prepare) }));
    const tooBig = prepared.find(
      (g) => packCount(g.events) > MAX_EVENTS_PER_TRANSACTION - 1 || groupSize(g) > MAX_BYTES_PER_TRANSACTION,
    );
    if (tooBig !== undefined)
      throw new Error(`keyed group ${tooBig.key} has ${tooBig.events.length} events: more than one transaction holds`);
    if (prepared.length === 0) return [];
    return new Promise<readonly StoredEvent[]>((resolve, reject) => {
      const queue = this.waiting.get(deploymentId) ?? [];
      queue.push({ groups: prepared, resolve, reject });
      this.waiting.set(deploymentId, queue);
      if (!this.committing.has(deploymentId)) void this.commitWaiting(deploymentId);
    });
  }

  /** Commits what waits for one deployment, round after round, until nothing waits. */
  private async commitWaiting(deploymentId: string): Promise<void> {
    this.committing.add(deploymentId);
    try {
      for (;;) {
        const round = this.waiting.get(deploymentId) ?? [];
        this.waiting.delete(deploymentId);
        if (round.length === 0) return;
        // A key asked for twice (a retried chunk arriving beside the original) is appended once, for the first.
        const owner = new Map<string, Waiting>();
        const merged: PreparedGroup[] = [];
        for (const caller of round)
          for (const group of caller.groups)
            if (!owner.has(group.key)) {
              owner.set(group.key, caller);
              merged.push(group);
            }
        try {
          const stored = await this.appendGroupsOnce(deploymentId, merged);
          for (const caller of round)
            caller.resolve(
              caller.groups.flatMap((g) => (owner.get(g.key) === caller ? (stored.get(g.key) ?? []) : [])),
            );
        } catch (error) {
          for (const caller of round) caller.reject(error);
        }
      }
    } finally {
      this.committing.delete(deploymentId);
    }
  }

  /** The groups not appended yet, appended: each group's stored events by its key (none for one already there). */
  private async appendGroupsOnce(
    deploymentId: string,
    groupsAsked: readonly PreparedGroup[],
  ): Promise<Map<string, StoredEvent[]>> {
    let groups = groupsAsked;
    const stored = new Map<string, StoredEvent[]>();
    const guess = this.guessedHead(deploymentId);
    if (guess !== undefined) {
      const pending = [...groups];
      try {
        await this.appendInBatches(deploymentId, pending, stored, guess);
        return stored;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        // Someone else wrote since (or a retried chunk is in already): read, as without a guess, for a while.
        this.heads.set(deploymentId, { at: Date.now() + GUESS_PAUSE_MS });
        this.stats.missedGuesses += 1;
        groups = pending;
      }
    }
    // The head comes with the markers: the first transaction needs no read of its own.
    const { head, markers: done } = await readHeadAndMarkers(
      this.db,
      this.tableName,
      deploymentId,
      groups.map((g) => g.key),
    );
    const remaining = groups.filter((g) => !done.has(g.key));
    try {
      // Nobody else writing: one transaction per batch, as for any append.
      await this.appendInBatches(deploymentId, remaining, stored, head);
      return stored;
    } catch (error) {
      // The head moved (another writer) or a marker appeared (a concurrent retry): park and merge.
      if (!isConditionFailure(error)) throw error;
      this.stats.lostRaces += 1;
    }
    const parkable = remaining.filter((g) => groupSize(g) <= MAX_PARKED_BYTES);
    const big = remaining.filter((g) => groupSize(g) > MAX_PARKED_BYTES);
    if (parkable.length > 0)
      for (const [key, events] of await this.parking.parkAndMerge(deploymentId, parkable)) stored.set(key, events);
    if (big.length > 0)
      for (const [key, events] of await this.appendRetrying(deploymentId, big)) stored.set(key, events);
    return stored;
  }

  /**
   * The groups in transactions of as many as fit, one after the other, each one's events into `stored`; `pending`
   * loses each batch once it is written, so after a failure it holds what is left.
   */
  private async appendInBatches(
    deploymentId: string,
    pending: PreparedGroup[],
    stored: Map<string, StoredEvent[]>,
    head?: Head,
  ): Promise<void> {
    // After the first transaction the head is the one it wrote: each later one starts from there, read or not.
    let known = head;
    while (pending.length > 0) {
      const [batch = []] = groupBatches(
        pending.map((g) => ({ sizes: g.events.map((e) => e.size), size: groupSize(g) })),
      );
      const written = await this.appendGroups(
        deploymentId,
        batch.map((i) => pending[i]!),
        known,
      );
      this.stats.direct += 1;
      for (const [key, events] of written.stored) stored.set(key, events);
      known = written.head;
      this.remember(deploymentId, known);
      pending.splice(0, batch.length);
    }
  }

  /** The head this process last wrote for the deployment, if recent and no guess of it missed lately. */
  private guessedHead(deploymentId: string): Head | undefined {
    const entry = this.heads.get(deploymentId);
    if (entry?.head === undefined) return undefined;
    return Date.now() - entry.at <= GUESS_TRUST_MS ? entry.head : undefined;
  }

  private remember(deploymentId: string, head: Head): void {
    const entry = this.heads.get(deploymentId);
    if (entry !== undefined && entry.head === undefined && entry.at > Date.now()) return; // a recent miss: no guessing
    if (this.heads.size >= MAX_GUESSED_HEADS) this.heads.clear();
    this.heads.set(deploymentId, { head, at: Date.now() });
  }

  /** The old way, for groups too big to park: retry the head until the groups are in. */
  private async appendRetrying(
    deploymentId: string,
    groups: readonly PreparedGroup[],
  ): Promise<Map<string, StoredEvent[]>> {
    const stored = new Map<string, StoredEvent[]>();
    let remaining = [...groups];
    for (let attempt = 1; remaining.length > 0; attempt += 1) {
      const { head, markers: done } = await readHeadAndMarkers(
        this.db,
        this.tableName,
        deploymentId,
        remaining.map((g) => g.key),
      );
      remaining = remaining.filter((g) => !done.has(g.key));
      try {
        await this.appendInBatches(deploymentId, remaining, stored, head);
      } catch (error) {
        if (!isConditionFailure(error) || attempt >= this.maxAttempts) throw error;
        await sleep(Math.random() * Math.min(100, 5 * 2 ** Math.min(attempt, 5)));
      }
    }
    return stored;
  }

  /** Merges every group parked in a deployment's log (a writer that died between parking and merging left some). */
  async mergeParked(deploymentId: string): Promise<void> {
    await this.parking.mergeUntil(deploymentId, undefined);
  }

  /**
   * One transaction: the head moves past the groups' events; each group's marker (absent before) and events are put.
   * From `head` when the caller just read it (its condition refuses a head that moved since), else read first.
   * Answers the events stored by key, and the head it left.
   */
  private async appendGroups(
    deploymentId: string,
    groups: readonly PreparedGroup[],
    head?: Head,
  ): Promise<{ stored: Map<string, StoredEvent[]>; head: Head }> {
    const { seq: seen, at: seenAt } = head ?? (await readHead(this.db, this.tableName, deploymentId));
    const total = groups.reduce((n, g) => n + g.events.length, 0);
    let at = seenAt;
    const inOrder = groups.map((g) => {
      const events = dated(at, g.events);
      at = lastAt(events, at);
      return { ...g, events };
    });
    const items: TransactItem[] = [moveHeadItem(this.tableName, deploymentId, seen, seen + total, at)];
    const stored = new Map<string, StoredEvent[]>();
    let seq = seen;
    for (const group of inOrder) {
      const events: StoredEvent[] = [];
      stored.set(group.key, events);
      items.push(markerItem(this.tableName, deploymentId, group.key, seq + 1));
      for (const e of group.events) {
        seq += 1;
        events.push({ seq, at: e.at, event: JSON.parse(e.body) as StoredEvent['event'] });
      }
    }
    // The groups' events packed together (a pack may hold the end of one group and the start of the next).
    items.push(
      ...eventItems(
        this.tableName,
        deploymentId,
        seen + 1,
        inOrder.flatMap((g) => g.events),
      ),
    );
    await this.db.send(new TransactWriteCommand({ TransactItems: items }));
    return { stored, head: { seq, at } };
  }

  private async appendBatch(deploymentId: string, batch: readonly Prepared[]): Promise<StoredEvent[]> {
    for (let attempt = 1; ; attempt += 1) {
      const { seq: seen, at: seenAt } = await readHead(this.db, this.tableName, deploymentId);
      const inOrder = dated(seenAt, batch);
      try {
        await this.db.send(
          new TransactWriteCommand({
            TransactItems: [
              moveHeadItem(this.tableName, deploymentId, seen, seen + batch.length, lastAt(inOrder, seenAt)),
              ...eventItems(this.tableName, deploymentId, seen + 1, inOrder),
            ],
          }),
        );
        return inOrder.map((e, i) => ({
          seq: seen + 1 + i,
          at: e.at,
          event: JSON.parse(e.body) as StoredEvent['event'],
        }));
      } catch (error) {
        // A lost race (the head moved) or a transaction conflict with another writer: read the head again.
        if (!isConditionFailure(error) || attempt >= this.maxAttempts) throw error;
        await sleep(Math.random() * Math.min(100, 5 * 2 ** Math.min(attempt, 5)));
      }
    }
  }

  async after(deploymentId: string, seq: number, limit: number): Promise<readonly StoredEvent[]> {
    if (limit <= 0) return [];
    // Items whose last seq is past `seq`: the pack holding seq + 1 comes first.
    const events: StoredEvent[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
          ExpressionAttributeValues: {
            ':pk': keys.deploymentEvent(deploymentId, 0).pk,
            ':from': keys.deploymentEvent(deploymentId, seq + 1).sk,
            ':to': keys.deploymentEvent(deploymentId, LAST_SEQ).sk,
          },
          ConsistentRead: true,
          Limit: limit - events.length, // every item holds at least one event
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) events.push(...eventsOf(item).filter((e) => e.seq > seq));
      start = page.LastEvaluatedKey;
    } while (start !== undefined && events.length < limit);
    // A query is read-committed, not serialisable with transactions: never hand out a seq past a gap.
    return contiguousAfter(seq, events).slice(0, limit);
  }

  async page(deploymentId: string, offset: number, limit: number): Promise<readonly StoredEvent[]> {
    return this.after(deploymentId, offset, limit);
  }

  async last(deploymentId: string): Promise<StoredEvent | undefined> {
    const { Items = [] } = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :event)',
        ExpressionAttributeValues: {
          ':pk': keys.deploymentEvent(deploymentId, 0).pk,
          ':event': prefixes.deploymentEvent,
        },
        ConsistentRead: true,
        ScanIndexForward: false,
        Limit: 1,
      }),
    );
    return Items[0] === undefined ? undefined : eventsOf(Items[0]).at(-1);
  }
}
