// RateLimiter adapter: GCRA (the token bucket without a refill job) on one DynamoDB item per key, shared by
// every function instance. The item holds `tat`, the theoretical arrival time of the next request (epoch ms).
// A request is allowed when tat <= now + (burst - 1) * interval, and then moves tat by one interval. A take of
// `count` tokens at once (a container's lease, functions/shared/rate-gate.ts) is allowed when
// tat <= now + (burst - count) * interval, and moves tat by `count` intervals: all or nothing.
//
// No read before the write: each take is at most two conditional UpdateItems, never a get-then-put.
//   1. bucket idle  (no item, or tat < now)            -> tat = now + interval
//   2. room left    (now <= tat <= now + (burst-1)*T)  -> tat = tat + interval
// A refused request costs one failed write: the old item comes back with the failure (ALL_OLD), so the
// Retry-After is computed without a read, and when step 1's answer already shows no room step 2 is skipped
// (tat never decreases, so it cannot have made room since).
//
// Numbers: times are kept as whole microseconds in JS and written as milliseconds with at most three
// decimals, which DynamoDB adds exactly (a fractional interval such as 1000/3 ms would otherwise drift
// through float rounding and miscount the last request of a burst). The interval is rounded to 1 µs.
//
// Failures: DynamoDB errors propagate (the client turns them into DatabaseError). TTL (`ttl`, epoch seconds)
// is set past the moment the bucket is full again, plus a margin for clock skew between instances, so an
// expired item is always equivalent to an idle one; DynamoDB deletes late, and an expired item still read
// is treated as idle by step 1. If the item vanishes between the two steps, the take starts over.
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { RateDecision, RateLimiter, RatePolicy } from '../../domain/identity/ports.js';
import { isConditionFailure } from './conditional.js';
import { keys } from './keys.js';

const US_PER_MS = 1_000;
const US_PER_S = 1_000_000;
/** Seconds the TTL is kept past the bucket's refill, for instances whose clocks disagree. */
const TTL_SKEW_MARGIN_S = 60;
/** Rounds of (idle, room) before giving up; more than one happens only if the item is deleted meanwhile. */
const MAX_ROUNDS = 3;

type RawItem = Record<string, { N?: string } | undefined> | undefined;

/** The `tat` of the item a failed condition returned (raw attribute values), in µs; undefined if absent. */
const oldTatUs = (item: RawItem): number | undefined => {
  const value = item?.['tat']?.N;
  return value === undefined ? undefined : Math.round(Number(value) * US_PER_MS);
};

const toMs = (us: number): number => us / US_PER_MS;

export class DynamoRateLimiter implements RateLimiter {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async take(key: string, policy: RatePolicy, now: Date, count = 1): Promise<RateDecision> {
    if (!(policy.ratePerSecond > 0) || !Number.isInteger(policy.burst) || policy.burst < 1) {
      throw new RangeError(
        `Invalid rate policy: ratePerSecond must be > 0 and burst an integer >= 1 (got ${policy.ratePerSecond}, ${policy.burst}).`,
      );
    }
    if (!Number.isInteger(count) || count < 1 || count > policy.burst)
      throw new RangeError(`Invalid count ${count}: an integer from 1 to the burst.`);
    const interval = Math.max(1, Math.round(US_PER_S / policy.ratePerSecond));
    const nowUs = now.getTime() * US_PER_MS;
    const tolerance = (policy.burst - count) * interval;
    const ttl = Math.ceil((nowUs + policy.burst * interval) / US_PER_S) + TTL_SKEW_MARGIN_S;
    const refuse = (tat: number): RateDecision => ({
      allowed: false,
      remaining: 0,
      retryAfterSeconds: Math.max(1, Math.ceil((tat - tolerance - nowUs) / US_PER_S)),
    });

    for (let round = 0; round < MAX_ROUNDS; round++) {
      const idle = await this.#update(key, {
        UpdateExpression: 'SET #tat = :tat, #ttl = :ttl',
        ConditionExpression: 'attribute_not_exists(#tat) OR #tat < :now',
        ExpressionAttributeValues: { ':tat': toMs(nowUs + count * interval), ':ttl': ttl, ':now': toMs(nowUs) },
      });
      if (idle.ok) return { allowed: true, remaining: policy.burst - count, retryAfterSeconds: 0 };
      if (idle.tat !== undefined && idle.tat > nowUs + tolerance) return refuse(idle.tat);

      const room = await this.#update(key, {
        UpdateExpression: 'SET #tat = #tat + :interval, #ttl = :ttl',
        ConditionExpression: '#tat BETWEEN :now AND :limit',
        ExpressionAttributeValues: {
          ':interval': toMs(count * interval),
          ':ttl': ttl,
          ':now': toMs(nowUs),
          ':limit': toMs(nowUs + tolerance),
        },
      });
      if (room.ok) {
        const remaining = Math.floor((nowUs + policy.burst * interval - room.tat) / interval);
        return { allowed: true, remaining: Math.max(0, remaining), retryAfterSeconds: 0 };
      }
      // Past the limit: refused. Gone or idle again (deleted by TTL, recreated by a lagging clock): start over.
      if (room.tat !== undefined && room.tat >= nowUs) return refuse(room.tat);
    }
    throw new Error(`Rate limit state of ${key} kept changing during ${MAX_ROUNDS} rounds.`);
  }

  /** One conditional update; its new `tat` when it applied, or the item's `tat` when the condition failed. */
  async #update(
    key: string,
    update: {
      UpdateExpression: string;
      ConditionExpression: string;
      ExpressionAttributeValues: Record<string, number>;
    },
  ): Promise<{ ok: true; tat: number } | { ok: false; tat: number | undefined }> {
    try {
      const result = await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.rateLimit(key),
          ...update,
          ExpressionAttributeNames: { '#tat': 'tat', '#ttl': 'ttl' },
          ReturnValues: 'UPDATED_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { ok: true, tat: Math.round(Number(result.Attributes?.['tat']) * US_PER_MS) };
    } catch (error) {
      if (isConditionFailure(error)) return { ok: false, tat: oldTatUs(error.Item) };
      throw error;
    }
  }
}
