import { randomUUID } from 'node:crypto';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RatePolicy } from '../../../../domain/identity/ports.js';
import { makeDynamoClient } from '../../../../infra/aws-clients.js';
import { keys } from '../../../../infra/dynamodb/keys.js';
import { amortisedRateGate } from '../../../../domain/identity/rate-gate.js';
import { DynamoRateLimiter } from '../../../../infra/dynamodb/rate-limiter.js';
import { createTestTable, dynamoClient, uniqueName } from '../../../support/aws.js';

const table = uniqueName('rate');
const ENDPOINT = 'AWS_ENDPOINT_URL_DYNAMODB';
const previousEndpoint = process.env[ENDPOINT];
// Recent, so every TTL written is in the future; whole seconds, so Retry-After values are exact.
const base = Math.floor(Date.now() / 1_000) * 1_000;
const at = (ms: number): Date => new Date(base + ms);
const newKey = (): string => `ip-${randomUUID()}`;

// The production client (with its error translation), one per simulated function instance.
let instances: DynamoDBDocumentClient[] = [];
let limiter: DynamoRateLimiter;

beforeAll(async () => {
  await createTestTable(dynamoClient(), table);
  process.env[ENDPOINT] = inject('dynamoEndpoint');
  instances = Array.from({ length: 4 }, () => makeDynamoClient({ AWS_REGION: 'us-east-1' }));
  limiter = new DynamoRateLimiter(instances[0]!, table);
});

afterAll(() => {
  for (const db of instances) db.destroy();
  if (previousEndpoint === undefined) delete process.env[ENDPOINT];
  else process.env[ENDPOINT] = previousEndpoint;
});

const takeMany = async (key: string, policy: RatePolicy, now: Date, count: number) => {
  const decisions = [];
  for (let i = 0; i < count; i++) decisions.push(await limiter.take(key, policy, now));
  return decisions;
};

describe('DynamoRateLimiter', () => {
  it('allows a burst, then refuses with the seconds until the next request is allowed', async () => {
    // Prepare
    const key = newKey();
    const policy = { ratePerSecond: 0.2, burst: 5 }; // one request per 5 s
    // Act
    const burst = await takeMany(key, policy, at(0), 5);
    const refused = await limiter.take(key, policy, at(0));
    const refusedLater = await limiter.take(key, policy, at(4_500));
    const allowedAgain = await limiter.take(key, policy, at(5_000));
    // Assess
    expect(burst).toEqual([4, 3, 2, 1, 0].map((remaining) => ({ allowed: true, remaining, retryAfterSeconds: 0 })));
    expect(refused).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 5 });
    expect(refusedLater).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    expect(allowedAgain).toEqual({ allowed: true, remaining: 0, retryAfterSeconds: 0 });
  });

  it('refills one request per interval and the whole burst after a quiet period', async () => {
    // Prepare
    const key = newKey();
    const policy = { ratePerSecond: 2, burst: 4 };
    await takeMany(key, policy, at(0), 4);
    // Act
    const tooSoon = await limiter.take(key, policy, at(499));
    const refilledOne = await limiter.take(key, policy, at(500));
    const emptyAgain = await limiter.take(key, policy, at(500));
    const afterQuiet = await takeMany(key, policy, at(10_000), 5);
    // Assess
    expect(tooSoon).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    expect(refilledOne).toEqual({ allowed: true, remaining: 0, retryAfterSeconds: 0 });
    expect(emptyAgain.allowed).toBe(false);
    expect(afterQuiet.map((d) => d.allowed)).toEqual([true, true, true, true, false]);
    expect(afterQuiet.map((d) => d.remaining)).toEqual([3, 2, 1, 0, 0]);
  });

  it('holds a sustained flood to the rate after the burst', async () => {
    // Prepare: 20 requests a second for 10 s against 10 a second, burst 3.
    const key = newKey();
    const policy = { ratePerSecond: 10, burst: 3 };
    // Act
    const allowedAt: number[] = [];
    for (let ms = 0; ms < 10_000; ms += 50) {
      if ((await limiter.take(key, policy, at(ms))).allowed) allowedAt.push(ms);
    }
    // Assess: the burst (refilling while it is spent), then exactly one every 100 ms: 3 + 10/s * 9.95 s in all.
    const steady = Array.from({ length: 97 }, (_, i) => 300 + i * 100);
    expect(allowedAt).toEqual([0, 50, 100, 150, 200, ...steady]);
    expect(allowedAt).toHaveLength(102);
  });

  it('counts a fractional interval exactly (3 per second)', async () => {
    // Prepare
    const key = newKey();
    const policy = { ratePerSecond: 3, burst: 3 };
    // Act
    const burst = await takeMany(key, policy, at(0), 4);
    const before = await limiter.take(key, policy, at(333));
    const after = await limiter.take(key, policy, at(334));
    // Assess
    expect(burst.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(burst.map((d) => d.remaining)).toEqual([2, 1, 0, 0]);
    expect(before.allowed).toBe(false);
    expect(after).toEqual({ allowed: true, remaining: 0, retryAfterSeconds: 0 });
  });

  it('allows exactly the burst among 300 concurrent takes from four instances', async () => {
    // Prepare
    const key = newKey();
    const policy = { ratePerSecond: 1, burst: 200 };
    const limiters = instances.map((db) => new DynamoRateLimiter(db, table));
    // Act
    const decisions = await Promise.all(
      Array.from({ length: 300 }, (_, i) => limiters[i % limiters.length]!.take(key, policy, at(0))),
    );
    // Assess: every allowed take saw its own bucket level, every refused one a wait.
    const allowed = decisions.filter((d) => d.allowed);
    const refused = decisions.filter((d) => !d.allowed);
    expect(allowed).toHaveLength(200);
    expect(allowed.map((d) => d.remaining).sort((a, b) => b - a)).toEqual(
      Array.from({ length: 200 }, (_, i) => 199 - i),
    );
    expect(refused).toHaveLength(100);
    expect(refused.every((d) => d.remaining === 0 && d.retryAfterSeconds === 1)).toBe(true);
  });

  it('keeps keys independent', async () => {
    // Prepare
    const [first, second] = [newKey(), newKey()];
    const policy = { ratePerSecond: 1, burst: 1 };
    await limiter.take(first, policy, at(0));
    // Act
    const firstAgain = await limiter.take(first, policy, at(0));
    const secondFirst = await limiter.take(second, policy, at(0));
    // Assess
    expect(firstAgain.allowed).toBe(false);
    expect(secondFirst).toEqual({ allowed: true, remaining: 0, retryAfterSeconds: 0 });
  });

  it('stores the arrival time and a TTL (epoch seconds) past the full refill', async () => {
    // Prepare
    const key = newKey();
    const policy = { ratePerSecond: 4, burst: 8 }; // full again 2 s after the first take
    // Act
    await takeMany(key, policy, at(0), 3);
    // Assess
    const { Item } = await instances[0]!.send(
      new GetCommand({ TableName: table, Key: keys.rateLimit(key), ConsistentRead: true }),
    );
    expect(Item?.['tat']).toBe(base + 750);
    const ttl = Item?.['ttl'] as number;
    expect(Number.isInteger(ttl)).toBe(true);
    expect(ttl).toBeGreaterThanOrEqual((base + 2_000) / 1_000);
    expect(ttl).toBeLessThanOrEqual((base + 2_000) / 1_000 + 120);
  });

  it('rejects a policy it cannot enforce', async () => {
    // Act / Assess
    await expect(limiter.take(newKey(), { ratePerSecond: 0, burst: 1 }, at(0))).rejects.toThrow(RangeError);
    await expect(limiter.take(newKey(), { ratePerSecond: 1, burst: 0 }, at(0))).rejects.toThrow(RangeError);
  });
});

describe('DynamoRateLimiter: several tokens at once (a lease)', () => {
  it('takes all of them or none, and counts them against the same bucket', async () => {
    const key = newKey();
    const policy = { ratePerSecond: 1, burst: 20 };
    const first = await limiter.take(key, policy, at(0), 10);
    const second = await limiter.take(key, policy, at(0), 11);
    const third = await limiter.take(key, policy, at(0), 10);
    const fourth = await limiter.take(key, policy, at(0), 1);
    expect([first.allowed, first.remaining]).toEqual([true, 10]);
    expect(second.allowed).toBe(false);
    expect([third.allowed, third.remaining]).toEqual([true, 0]);
    expect([fourth.allowed, fourth.retryAfterSeconds]).toEqual([false, 1]);
  });
});

describe('amortisedRateGate over the shared bucket, across simulated instances', () => {
  // Each instance is one gate (its own leases) on its own client; time is fixed, so nothing refills.
  const gates = (policy: RatePolicy, count: number, clock: { now: () => Date }) => {
    const writes = { count: 0 };
    const made = instances.slice(0, count).map((db) => {
      const shared = new DynamoRateLimiter(db, table);
      const counted = {
        take: (...args: Parameters<DynamoRateLimiter['take']>) => ((writes.count += 1), shared.take(...args)),
      };
      return amortisedRateGate(counted, () => policy, clock);
    });
    return { made, writes };
  };

  it('never lets a client past the bucket, and writes about once per lease', async () => {
    // Prepare: the spec's policy (100/s, burst 200: leases of 10), 4 instances, 400 requests at one instant
    const key = newKey();
    const clock = { now: () => at(0) };
    const { made, writes } = gates({ ratePerSecond: 100, burst: 200 }, 4, clock);
    // Act: round-robin over the instances
    const decisions = [];
    for (let i = 0; i < 200; i++) decisions.push(await made[i % made.length]!(key));
    const writesForTheBurst = writes.count;
    for (let i = 0; i < 200; i++) decisions.push(await made[i % made.length]!(key));
    // Assess: exactly the burst (each instance spent whole leases), one write per lease of 10
    expect(decisions.filter((d) => d.allowed).length).toBe(200);
    expect(decisions.slice(0, 200).every((d) => d.allowed)).toBe(true);
    expect(writesForTheBurst).toBe(20);
    // The flood past the limit: each instance asks the bucket once (a lease, then one token), then remembers
    expect(writes.count - writesForTheBurst).toBe(4 * 2);
    expect(decisions.at(-1)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
  });

  it('holds a client to the bucket at one instant, whatever the instances hold: at most the burst in all', async () => {
    // Prepare: uneven load over 3 instances, so leases are stranded on the quiet ones
    const key = newKey();
    const clock = { now: () => at(0) };
    const { made } = gates({ ratePerSecond: 100, burst: 200 }, 3, clock);
    const pattern = [0, 0, 0, 1, 0, 2, 0, 0, 1];
    let allowed = 0;
    for (let i = 0; i < 600; i++) if ((await made[pattern[i % pattern.length]!]!(key)).allowed) allowed += 1;
    // Assess: never more than the bucket at one instant; at most (leaseSize - 1) stranded per instance
    expect(allowed).toBeLessThanOrEqual(200);
    expect(allowed).toBeGreaterThanOrEqual(200 - 3 * 9);
  });

  it('exceeds the burst over time by at most (leaseSize - 1) per instance, the documented margin', async () => {
    // Prepare: 3 instances each hold a lease they barely used; the bucket then refills completely
    const key = newKey();
    let now = 0;
    const clock = { now: () => at(now) };
    const { made } = gates({ ratePerSecond: 100, burst: 200 }, 3, clock);
    for (const gate of made) expect((await gate(key)).allowed).toBe(true);
    now = 2_000; // the bucket is full again (200); each instance still holds 9 tokens of its lease
    // Act: a burst at one instant over the three instances
    let allowed = 0;
    for (let i = 0; i < 400; i++) if ((await made[i % 3]!(key)).allowed) allowed += 1;
    // Assess: the bucket's 200 plus what the leases held, and no more
    expect(allowed).toBeLessThanOrEqual(200 + 3 * 9);
    expect(allowed).toBeGreaterThanOrEqual(200);
  });

  it('refuses until the Retry-After it announced, then serves what refilled', async () => {
    const key = newKey();
    let now = 0;
    const clock = { now: () => at(now) };
    const { made } = gates({ ratePerSecond: 10, burst: 20 }, 1, clock); // leases of 1: exact
    const gate = made[0]!;
    for (let i = 0; i < 20; i++) expect((await gate(key)).allowed).toBe(true);
    expect((await gate(key)).allowed).toBe(false);
    now = 1_000; // 10 tokens refilled
    const after = [];
    for (let i = 0; i < 11; i++) after.push((await gate(key)).allowed);
    expect(after.filter(Boolean).length).toBe(10);
  });
});
