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
// a writer that loses the race for the head does not retry it against every other writer. It parks its groups
// (sk PARKED#<time>#<n>#<key>, plain puts, no contention) and merges: whoever merges next moves the head
// once for every parked group it finds (a delete of each parked item, its marker and its events, in one
// transaction), so N targets' writers cost about one head move per round instead of N racing ones, and a writer
// that loses the merge usually finds its groups already merged by the winner. Readers see one contiguous sequence.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BatchGetCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import {
  contiguousAfter,
  type DeploymentEventStore,
  type KeyedEventAppender,
  type KeyedEvents,
  type NewEvent,
  type StoredEvent,
} from '../../domain/deployments/events.js';
import { isConditionFailure } from './conditional.js';
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
  type Parked,
  type Prepared,
  type PreparedGroup,
} from './event-packing.js';
import { keys, prefixes } from './keys.js';
// The layout's pure functions, exported here as before for the benchmarks and tests.
export { groupBatches, mergeBatch, packSizes, transactionBatches };

const MAX_ATTEMPTS = 100;
const LAST_SEQ = 9_999_999_999;
/** A parked group is one item (at most 400 KB): bigger groups keep retrying the head instead. */
const MAX_PARKED_BYTES = 300_000;
/** Parked groups read per merge round (a round's transaction holds at most 100 items anyway). */
const MERGE_READ_LIMIT = 100;
/** A parked item nobody merged (every writer gone, and the agent stopped retrying) expires after a day. */
const PARKED_TTL_SECONDS = 86_400;

export interface EventStoreOptions {
  /** Attempts per transaction before giving up (each lost race re-reads the head). */
  readonly maxAttempts?: number;
}

/** What a store's keyed appends did: for the benchmarks and tests. */
export interface AppendStats {
  /** Direct transactions that moved the head. */
  direct: number;
  /** Direct transactions that lost the race for the head (their groups were parked). */
  lostRaces: number;
  /** Groups parked. */
  parked: number;
  /** Merge transactions committed, and the ones that lost to another merge. */
  merges: number;
  lostMerges: number;
}

/** A call of appendOnce waiting for its round of the group commit. */
interface Waiting {
  readonly groups: readonly PreparedGroup[];
  readonly resolve: (stored: readonly StoredEvent[]) => void;
  readonly reject: (error: unknown) => void;
}

export class DynamoDeploymentEventStore implements DeploymentEventStore, KeyedEventAppender {
  private readonly maxAttempts: number;
  /** Per deployment: the calls waiting for the next round of the group commit, and whether a round is running. */
  private readonly waiting = new Map<string, Waiting[]>();
  private readonly committing = new Set<string>();
  private parkedCount = 0;
  readonly stats: AppendStats = { direct: 0, lostRaces: 0, parked: 0, merges: 0, lostMerges: 0 };

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    options: EventStoreOptions = {},
  ) {
    this.maxAttempts = options.maxAttempts ?? MAX_ATTEMPTS;
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
    groups: readonly PreparedGroup[],
  ): Promise<Map<string, StoredEvent[]>> {
    const stored = new Map<string, StoredEvent[]>();
    const done = await this.markedKeys(
      deploymentId,
      groups.map((g) => g.key),
    );
    const remaining = groups.filter((g) => !done.has(g.key));
    try {
      // Nobody else writing: one transaction per batch, as for any append.
      await this.appendInBatches(deploymentId, remaining, stored);
      return stored;
    } catch (error) {
      // The head moved (another writer) or a marker appeared (a concurrent retry): park and merge.
      if (!isConditionFailure(error)) throw error;
      this.stats.lostRaces += 1;
    }
    const parkable = remaining.filter((g) => groupSize(g) <= MAX_PARKED_BYTES);
    const big = remaining.filter((g) => groupSize(g) > MAX_PARKED_BYTES);
    if (parkable.length > 0)
      for (const [key, events] of await this.parkAndMerge(deploymentId, parkable)) stored.set(key, events);
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
  ): Promise<void> {
    while (pending.length > 0) {
      const [batch = []] = groupBatches(pending.map((g) => ({ events: packCount(g.events), size: groupSize(g) })));
      const written = await this.appendGroups(
        deploymentId,
        batch.map((i) => pending[i]!),
      );
      this.stats.direct += 1;
      for (const [key, events] of written) stored.set(key, events);
      pending.splice(0, batch.length);
    }
  }

  /** The old way, for groups too big to park: retry the head until the groups are in. */
  private async appendRetrying(
    deploymentId: string,
    groups: readonly PreparedGroup[],
  ): Promise<Map<string, StoredEvent[]>> {
    const stored = new Map<string, StoredEvent[]>();
    let remaining = [...groups];
    for (let attempt = 1; remaining.length > 0; attempt += 1) {
      const done = await this.markedKeys(
        deploymentId,
        remaining.map((g) => g.key),
      );
      remaining = remaining.filter((g) => !done.has(g.key));
      try {
        await this.appendInBatches(deploymentId, remaining, stored);
      } catch (error) {
        if (!isConditionFailure(error) || attempt >= this.maxAttempts) throw error;
        await sleep(Math.random() * Math.min(100, 5 * 2 ** Math.min(attempt, 5)));
      }
    }
    return stored;
  }

  /** Parks the groups (plain puts), then merges parked groups until none of these is left parked. */
  private async parkAndMerge(
    deploymentId: string,
    groups: readonly PreparedGroup[],
  ): Promise<Map<string, StoredEvent[]>> {
    const pk = keys.deploymentEventsHead(deploymentId).pk;
    const now = Date.now();
    const ttl = Math.ceil(now / 1000) + PARKED_TTL_SECONDS;
    const mine = groups.map((g) => {
      this.parkedCount = (this.parkedCount + 1) % 1_000_000;
      return {
        group: g,
        sk: keys.parkedEvents(deploymentId, now, this.parkedCount, g.key).sk,
      };
    });
    // Plain puts, side by side (each sort key is new: no condition, nothing to contend for).
    await Promise.all(
      mine.map(({ group, sk }) =>
        this.db.send(
          new PutCommand({
            TableName: this.tableName,
            Item: {
              pk,
              sk,
              type: 'deployment_event_parked',
              groupKey: group.key,
              events: JSON.stringify(group.events.map((e) => ({ at: e.at, body: e.body }))),
              ttl,
            },
          }),
        ),
      ),
    );
    this.stats.parked += mine.length;
    await this.mergeUntil(deploymentId, new Set(mine.map((m) => m.sk)));
    // Merged, by this writer or another: the marker says where each group's events went, and whose they were.
    const markers = await this.markedKeys(
      deploymentId,
      mine.map((m) => m.group.key),
    );
    const stored = new Map<string, StoredEvent[]>();
    for (const { group, sk } of mine) {
      const marker = markers.get(group.key);
      if (marker?.parked !== sk) continue; // a duplicate of a group another call appended
      stored.set(
        group.key,
        group.events.map((e, i) => ({
          seq: marker.firstSeq + i,
          at: e.at,
          event: JSON.parse(e.body) as StoredEvent['event'],
        })),
      );
    }
    return stored;
  }

  /** Merges every group parked in a deployment's log (a writer that died between parking and merging left some). */
  async mergeParked(deploymentId: string): Promise<void> {
    await this.mergeUntil(deploymentId, undefined);
  }

  /** Merge rounds until none of the `waiting` parked items (or none at all) is left. */
  private async mergeUntil(deploymentId: string, waiting: ReadonlySet<string> | undefined): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      const { parked, more } = await this.parked(deploymentId);
      if (!more && !parked.some((p) => waiting === undefined || waiting.has(p.sk))) return;
      try {
        await this.merge(deploymentId, parked);
        this.stats.merges += 1;
      } catch (error) {
        // Another writer merged first (the head moved, or a parked item is gone): read again.
        if (!isConditionFailure(error) || attempt >= this.maxAttempts) throw error;
        this.stats.lostMerges += 1;
        await sleep(Math.random() * Math.min(20, 2 * 2 ** Math.min(attempt, 4)));
      }
    }
  }

  /** The parked groups of a deployment, oldest first (at most one round's worth). */
  private async parked(deploymentId: string): Promise<{ parked: Parked[]; more: boolean }> {
    const { Items = [], LastEvaluatedKey } = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :parked)',
        ExpressionAttributeValues: {
          ':pk': keys.deploymentEventsHead(deploymentId).pk,
          ':parked': prefixes.parkedEvents,
        },
        ConsistentRead: true,
        Limit: MERGE_READ_LIMIT,
      }),
    );
    const parked = Items.map((item) => {
      const events = (JSON.parse(String(item['events'])) as { at: string; body: string }[]).map((e) => ({
        ...e,
        size: e.body.length + 100,
      }));
      return { sk: String(item['sk']), key: String(item['groupKey']), events };
    });
    return { parked, more: LastEvaluatedKey !== undefined };
  }

  /**
   * One merge round: the head moves once past the events of the parked groups that fit one transaction (in parked
   * order); each parked item is deleted (conditioned on still being there), each new group gets its marker and
   * events; a group already marked (a duplicate) is only deleted.
   */
  private async merge(deploymentId: string, parked: readonly Parked[]): Promise<void> {
    const marked = await this.markedKeys(deploymentId, [...new Set(parked.map((p) => p.key))]);
    const batch = mergeBatch(
      parked.map((p) => ({ key: p.key, events: packCount(p.events), size: groupSize(p) })),
      new Set(marked.keys()),
    );
    const { seq: seen, at: seenAt } = await this.head(deploymentId);
    const items: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']> = [];
    let seq = seen;
    let at = seenAt;
    for (const { index, append } of batch) {
      const parkedGroup = parked[index]!;
      const group = { ...parkedGroup, events: dated(at, parkedGroup.events) };
      at = lastAt(group.events, at);
      items.push({
        Delete: {
          TableName: this.tableName,
          Key: { pk: keys.deploymentEventsHead(deploymentId).pk, sk: group.sk },
          ConditionExpression: 'attribute_exists(pk)',
        },
      });
      if (!append) continue;
      items.push(this.marker(deploymentId, group.key, seq + 1, group.sk));
      items.push(...eventItems(this.tableName, deploymentId, seq + 1, group.events));
      seq += group.events.length;
    }
    await this.db.send(
      new TransactWriteCommand({ TransactItems: [this.moveHead(deploymentId, seen, seq, at), ...items] }),
    );
  }

  /** The markers of the keys that have one (batch reads of at most 100 keys): where their events start, who parked them. */
  private async markedKeys(
    deploymentId: string,
    groupKeys: readonly string[],
  ): Promise<Map<string, { firstSeq: number; parked?: string }>> {
    const found = new Map<string, { firstSeq: number; parked?: string }>();
    for (let i = 0; i < groupKeys.length; i += 100) {
      let request: NonNullable<ConstructorParameters<typeof BatchGetCommand>[0]['RequestItems']> | undefined = {
        [this.tableName]: {
          Keys: groupKeys.slice(i, i + 100).map((k) => keys.deploymentEventsMarker(deploymentId, k)),
          ConsistentRead: true,
        },
      };
      while (request !== undefined && Object.keys(request).length > 0) {
        const answer = await this.db.send(new BatchGetCommand({ RequestItems: request }));
        for (const item of answer.Responses?.[this.tableName] ?? [])
          found.set(String(item['groupKey']), {
            firstSeq: Number(item['firstSeq']),
            ...(typeof item['parked'] === 'string' ? { parked: item['parked'] } : {}),
          });
        request = answer.UnprocessedKeys as typeof request;
      }
    }
    return found;
  }

  /** The transaction item that moves a deployment's head from the seq a writer read (`seen`) to `next`. */
  private moveHead(deploymentId: string, seen: number, next: number, at: string | undefined) {
    return {
      Update: {
        TableName: this.tableName,
        Key: keys.deploymentEventsHead(deploymentId),
        UpdateExpression: at === undefined ? 'SET #seq = :next' : 'SET #seq = :next, #at = :at',
        ConditionExpression: 'attribute_not_exists(#seq) OR #seq = :seen',
        ExpressionAttributeNames: { '#seq': 'seq', ...(at === undefined ? {} : { '#at': 'at' }) },
        ExpressionAttributeValues: { ':seen': seen, ':next': next, ...(at === undefined ? {} : { ':at': at }) },
      },
    };
  }

  /** The put of a group's marker (absent before): where its events start, and the parked item it came from. */
  private marker(deploymentId: string, groupKey: string, firstSeq: number, parked?: string) {
    return {
      Put: {
        TableName: this.tableName,
        Item: {
          ...keys.deploymentEventsMarker(deploymentId, groupKey),
          type: 'deployment_event_marker',
          groupKey,
          firstSeq,
          ...(parked === undefined ? {} : { parked }),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    };
  }

  /** One transaction: the head moves past the groups' events; each group's marker (absent before) and events are put. */
  private async appendGroups(
    deploymentId: string,
    groups: readonly PreparedGroup[],
  ): Promise<Map<string, StoredEvent[]>> {
    const { seq: seen, at: seenAt } = await this.head(deploymentId);
    const total = groups.reduce((n, g) => n + g.events.length, 0);
    let at = seenAt;
    const inOrder = groups.map((g) => {
      const events = dated(at, g.events);
      at = lastAt(events, at);
      return { ...g, events };
    });
    const items: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']> = [
      this.moveHead(deploymentId, seen, seen + total, at),
    ];
    const stored = new Map<string, StoredEvent[]>();
    let seq = seen;
    for (const group of inOrder) {
      const events: StoredEvent[] = [];
      stored.set(group.key, events);
      items.push(this.marker(deploymentId, group.key, seq + 1));
      items.push(...eventItems(this.tableName, deploymentId, seq + 1, group.events));
      for (const e of group.events) {
        seq += 1;
        events.push({ seq, at: e.at, event: JSON.parse(e.body) as StoredEvent['event'] });
      }
    }
    await this.db.send(new TransactWriteCommand({ TransactItems: items }));
    return stored;
  }

  private async appendBatch(deploymentId: string, batch: readonly Prepared[]): Promise<StoredEvent[]> {
    for (let attempt = 1; ; attempt += 1) {
      const { seq: seen, at: seenAt } = await this.head(deploymentId);
      const inOrder = dated(seenAt, batch);
      try {
        await this.db.send(
          new TransactWriteCommand({
            TransactItems: [
              this.moveHead(deploymentId, seen, seen + batch.length, lastAt(inOrder, seenAt)),
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

  /** The head: the last seq written and the time of that event (absent on a head written before times were kept). */
  private async head(deploymentId: string): Promise<{ seq: number; at: string | undefined }> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.deploymentEventsHead(deploymentId), ConsistentRead: true }),
    );
    return {
      seq: Item === undefined ? 0 : Number(Item['seq'] ?? 0),
      at: typeof Item?.['at'] === 'string' ? Item['at'] : undefined,
    };
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
