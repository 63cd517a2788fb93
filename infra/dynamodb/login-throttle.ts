// LoginThrottle adapter: failed logins per client address counted in fixed windows on one DynamoDB item,
// and a lockout once a window's count exceeds the policy's maximum. Shared by every function instance.
//
// Item: `window_start` (epoch ms), `failures` (in that window), `locked_until` (epoch ms), `ttl` (epoch s).
// `check` is one strongly consistent GetItem. `recordFailure` is one conditional UpdateItem chosen by the
// state it expects; when another instance changed the state first, the failed condition returns the item
// (ALL_OLD) and the update that fits it is tried next. The states and their updates:
//   no item, or window over                         -> new window: window_start = now, failures = 1
//   window current, under the maximum (or already
//     locked at least until now + lockout)          -> count: ADD failures 1
//   window current, at or over the maximum          -> lock: ADD failures 1, locked_until = now + lockout
// Every change is atomic (ADD, or SET under a condition), so concurrent failures are never lost, and
// locked_until only ever moves later, so a slow instance never shortens a lockout. A failure recorded while
// locked (a race with `check`) counts and extends the lockout from its own time.
//
// A window is not reset by a lockout: if lockoutSeconds < windowSeconds, one failure after the lockout
// ends, still in the same window, locks again. The TTL keeps the item past both the window and any lockout
// (plus a margin for clock skew between instances), so it never expires while it still matters; an expired
// item DynamoDB has not deleted yet is read as a window that is over.
//
// The same item shape counts wrong two-factor codes per user (keys.twoFactorThrottle), where an attempt is
// recorded before its code is checked and `release` takes a right code's attempt back (ADD -1, never below 0).
//
// Failures: DynamoDB errors propagate (the client turns them into DatabaseError); a policy that is not
// positive integers throws RangeError at construction.
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { LockoutState, LoginThrottlePolicy, TwoFactorThrottle } from '../../domain/identity/ports.js';
import { isConditionFailure } from './conditional.js';
import { keys, type Key } from './keys.js';

/** Seconds the TTL is kept past the window and the lockout, for instances whose clocks disagree. */
const TTL_SKEW_MARGIN_S = 60;
/** Each retry follows a change another instance made; the state moves forward only a few times per failure. */
const MAX_ATTEMPTS = 8;

type Step = 'newWindow' | 'count' | 'lock';
type RawItem = Record<string, { N?: string } | undefined> | undefined;

const rawNumber = (item: RawItem, name: string): number | undefined => {
  const value = item?.[name]?.N;
  return value === undefined ? undefined : Number(value);
};

const stateAt = (lockedUntil: unknown, now: number): LockoutState =>
  typeof lockedUntil === 'number' && lockedUntil > now
    ? { locked: true, retryAfterSeconds: Math.ceil((lockedUntil - now) / 1_000) }
    : { locked: false, retryAfterSeconds: 0 };

const WINDOW_NAMES = { '#start': 'window_start', '#failures': 'failures', '#ttl': 'ttl' };
const ALL_NAMES = { ...WINDOW_NAMES, '#lockedUntil': 'locked_until' };

export class DynamoLoginThrottle implements TwoFactorThrottle {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly policy: LoginThrottlePolicy,
    /** The item of one counted subject: a client address by default, or keys.twoFactorThrottle for users. */
    private readonly keyOf: (subject: string) => Key = keys.loginThrottle,
  ) {
    for (const [name, value] of Object.entries(policy)) {
      if (!Number.isInteger(value) || (value as number) < 1) {
        throw new RangeError(`Invalid login throttle policy: ${name} must be an integer >= 1 (got ${String(value)}).`);
      }
    }
  }

  async check(ip: string, now: Date): Promise<LockoutState> {
    const result = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.keyOf(ip), ConsistentRead: true }),
    );
    return stateAt(result.Item?.['locked_until'], now.getTime());
  }

  async recordFailure(ip: string, now: Date): Promise<LockoutState> {
    const at = now.getTime();
    const windowFloor = at - this.policy.windowSeconds * 1_000;
    const lockedUntil = at + this.policy.lockoutSeconds * 1_000;
    const ttl =
      Math.ceil(at / 1_000) + Math.max(this.policy.windowSeconds, this.policy.lockoutSeconds) + TTL_SKEW_MARGIN_S;
    const current = '#start > :floor';
    const updates: Record<
      Step,
      { UpdateExpression: string; ConditionExpression: string; ExpressionAttributeValues: Record<string, number> }
    > = {
      newWindow: {
        UpdateExpression: 'SET #start = :now, #failures = :one, #ttl = :ttl',
        ConditionExpression: 'attribute_not_exists(#start) OR #start <= :floor',
        ExpressionAttributeValues: { ':now': at, ':one': 1, ':ttl': ttl, ':floor': windowFloor },
      },
      count: {
        UpdateExpression: 'ADD #failures :one SET #ttl = :ttl',
        ConditionExpression: `${current} AND (#failures < :max OR #lockedUntil >= :lockedUntil)`,
        ExpressionAttributeValues: {
          ':one': 1,
          ':ttl': ttl,
          ':floor': windowFloor,
          ':max': this.policy.maxFailures,
          ':lockedUntil': lockedUntil,
        },
      },
      lock: {
        UpdateExpression: 'ADD #failures :one SET #lockedUntil = :lockedUntil, #ttl = :ttl',
        ConditionExpression: `${current} AND #failures >= :max AND (attribute_not_exists(#lockedUntil) OR #lockedUntil < :lockedUntil)`,
        ExpressionAttributeValues: {
          ':one': 1,
          ':ttl': ttl,
          ':floor': windowFloor,
          ':max': this.policy.maxFailures,
          ':lockedUntil': lockedUntil,
        },
      },
    };
    /** The update whose condition the item (as a failed condition returned it) satisfies. */
    const stepFor = (item: RawItem): Step => {
      const start = rawNumber(item, 'window_start');
      if (start === undefined || start <= windowFloor) return 'newWindow';
      const failures = rawNumber(item, 'failures') ?? 0;
      const until = rawNumber(item, 'locked_until');
      return failures < this.policy.maxFailures || (until !== undefined && until >= lockedUntil) ? 'count' : 'lock';
    };

    let step: Step = 'count';
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      try {
        const result = await this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: this.keyOf(ip),
            ...updates[step],
            // DynamoDB refuses names an expression does not use: the new window leaves locked_until alone.
            ExpressionAttributeNames: step === 'newWindow' ? WINDOW_NAMES : ALL_NAMES,
            ReturnValues: 'ALL_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return stateAt(result.Attributes?.['locked_until'], at);
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        step = stepFor(error.Item);
      }
    }
    throw new Error(`Login throttle state of ${ip} kept changing during ${MAX_ATTEMPTS} attempts.`);
  }

  async release(subject: string, _now: Date): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.keyOf(subject),
          UpdateExpression: 'ADD #failures :minusOne',
          ConditionExpression: '#failures > :zero',
          ExpressionAttributeNames: { '#failures': 'failures' },
          ExpressionAttributeValues: { ':minusOne': -1, ':zero': 0 },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}
