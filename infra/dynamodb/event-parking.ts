// Parking and merging keyed groups of a deployment's event log (see deployment-event-store.ts). A writer that lost
// the race for the head parks its groups (sk PARKED#<time>#<n>#<key>, plain puts, no contention) and merges:
// whoever merges next moves the head once for every parked group it finds (a delete of each parked item, its
// marker and its events, in one transaction), so N targets' writers cost about one head move per round instead of
// N racing ones, and a writer that loses the merge usually finds its groups already merged by the winner.
import { setTimeout as sleep } from 'node:timers/promises';
import { PutCommand, QueryCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { StoredEvent } from '../../domain/deployments/events.js';
import { isConditionFailure } from './conditional.js';
import { markerItem, moveHeadItem, readHeadAndMarkers, readMarkers } from './event-head.js';
import {
  dated,
  eventItems,
  groupSize,
  lastAt,
  mergeBatch,
  type Parked,
  type Prepared,
  type PreparedGroup,
} from './event-packing.js';
import { keys, prefixes } from './keys.js';
import type { TransactItem } from './transactions.js';

/** A parked group is one item (at most 400 KB): bigger groups keep retrying the head instead. */
export const MAX_PARKED_BYTES = 300_000;
/** Parked groups read per merge round (a round's transaction holds at most 100 items anyway). */
const MERGE_READ_LIMIT = 100;
/** A parked item nobody merged (every writer gone, and the agent stopped retrying) expires after a day. */
const PARKED_TTL_SECONDS = 86_400;

/** What parking and merging did: for the benchmarks and tests (part of the store's AppendStats). */
export interface MergeStats {
  /** Groups parked. */
  parked: number;
  /** Merge transactions committed, and the ones that lost to another merge. */
  merges: number;
  lostMerges: number;
}

export class EventParking {
  private parkedCount = 0;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly stats: MergeStats,
    private readonly maxAttempts: number,
  ) {}

  /** Parks the groups (plain puts), then merges parked groups until none of these is left parked. */
  async parkAndMerge(deploymentId: string, groups: readonly PreparedGroup[]): Promise<Map<string, StoredEvent[]>> {
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
    const markers = await readMarkers(
      this.db,
      this.tableName,
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

  /** Merge rounds until none of the `waiting` parked items (or none at all) is left. */
  async mergeUntil(deploymentId: string, waiting: ReadonlySet<string> | undefined): Promise<void> {
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
    const {
      head: { seq: seen, at: seenAt },
      markers: marked,
    } = await readHeadAndMarkers(this.db, this.tableName, deploymentId, [...new Set(parked.map((p) => p.key))]);
    const batch = mergeBatch(
      parked.map((p) => ({ key: p.key, sizes: p.events.map((e) => e.size), size: groupSize(p) })),
      new Set(marked.keys()),
    );
    const items: TransactItem[] = [];
    const appended: Prepared[] = [];
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
      items.push(markerItem(this.tableName, deploymentId, group.key, seq + 1, group.sk));
      appended.push(...group.events);
      seq += group.events.length;
    }
    // The appended groups' events packed together.
    items.push(...eventItems(this.tableName, deploymentId, seen + 1, appended));
    await this.db.send(
      new TransactWriteCommand({
        TransactItems: [moveHeadItem(this.tableName, deploymentId, seen, seq, at), ...items],
      }),
    );
  }
}
