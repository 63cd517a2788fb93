import { randomUUID } from 'node:crypto';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LoginThrottlePolicy } from '../../../../domain/identity/ports.js';
import { makeDynamoClient } from '../../../../infra/aws-clients.js';
import { keys } from '../../../../infra/dynamodb/keys.js';
import { DynamoLoginThrottle } from '../../../../infra/dynamodb/login-throttle.js';
import { createTestTable, dynamoClient, uniqueName } from '../../../support/aws.js';

const table = uniqueName('throttle');
const ENDPOINT = 'AWS_ENDPOINT_URL_DYNAMODB';
const previousEndpoint = process.env[ENDPOINT];
// Recent, so every TTL written is in the future.
const base = Math.floor(Date.now() / 1_000) * 1_000;
const at = (ms: number): Date => new Date(base + ms);
const newIp = (): string => `203.0.113.${randomUUID()}`;
const policy: LoginThrottlePolicy = { maxFailures: 10, windowSeconds: 300, lockoutSeconds: 900 };
const UNLOCKED = { locked: false, retryAfterSeconds: 0 };

// The production client (with its error translation), one per simulated function instance.
let instances: DynamoDBDocumentClient[] = [];
let throttle: DynamoLoginThrottle;

beforeAll(async () => {
  await createTestTable(dynamoClient(), table);
  process.env[ENDPOINT] = inject('dynamoEndpoint');
  instances = Array.from({ length: 4 }, () => makeDynamoClient({ AWS_REGION: 'us-east-1' }));
  throttle = new DynamoLoginThrottle(instances[0]!, table, policy);
});

afterAll(() => {
  for (const db of instances) db.destroy();
  if (previousEndpoint === undefined) delete process.env[ENDPOINT];
  else process.env[ENDPOINT] = previousEndpoint;
});

const fail = async (ip: string, count: number, when: (i: number) => Date, using = throttle) => {
  const states = [];
  for (let i = 0; i < count; i++) states.push(await using.recordFailure(ip, when(i)));
  return states;
};

const stored = async (ip: string) =>
  (await instances[0]!.send(new GetCommand({ TableName: table, Key: keys.loginThrottle(ip), ConsistentRead: true })))
    .Item;

describe('DynamoLoginThrottle', () => {
  it('records ten failures unlocked and locks on the eleventh', async () => {
    // Prepare
    const ip = newIp();
    // Act
    const first10 = await fail(ip, 10, (i) => at(i * 1_000));
    const checkAt10 = await throttle.check(ip, at(10_000));
    const eleventh = await throttle.recordFailure(ip, at(10_000));
    // Assess
    expect(first10).toEqual(Array.from({ length: 10 }, () => UNLOCKED));
    expect(checkAt10).toEqual(UNLOCKED);
    expect(eleventh).toEqual({ locked: true, retryAfterSeconds: 900 });
    expect(await stored(ip)).toMatchObject({ failures: 11, window_start: base, locked_until: base + 10_000 + 900_000 });
  });

  it('answers an unknown address unlocked', async () => {
    // Act / Assess
    expect(await throttle.check(newIp(), at(0))).toEqual(UNLOCKED);
  });

  it('answers locked with the remaining seconds until the lockout ends, then unlocked', async () => {
    // Prepare: locked at 0 until 900 s.
    const ip = newIp();
    await fail(ip, 11, () => at(0));
    // Act
    const states = await Promise.all([1, 449_500, 899_001, 900_000, 1_000_000].map((ms) => throttle.check(ip, at(ms))));
    // Assess
    expect(states).toEqual([
      { locked: true, retryAfterSeconds: 900 },
      { locked: true, retryAfterSeconds: 451 },
      { locked: true, retryAfterSeconds: 1 },
      UNLOCKED,
      UNLOCKED,
    ]);
  });

  it('starts counting afresh once windowSeconds have passed', async () => {
    // Prepare: ten failures in the window that starts at 0.
    const [ip, sameWindowIp] = [newIp(), newIp()];
    await fail(ip, 10, () => at(0));
    await fail(sameWindowIp, 10, () => at(0));
    // Act
    const lastMomentOfWindow = await throttle.recordFailure(sameWindowIp, at(299_999));
    const nextWindow = await fail(ip, 10, (i) => at(300_000 + i));
    const eleventhOfNextWindow = await throttle.recordFailure(ip, at(300_010));
    // Assess
    expect(lastMomentOfWindow).toEqual({ locked: true, retryAfterSeconds: 900 });
    expect(nextWindow).toEqual(Array.from({ length: 10 }, () => UNLOCKED));
    expect(eleventhOfNextWindow).toEqual({ locked: true, retryAfterSeconds: 900 });
    expect(await stored(ip)).toMatchObject({ failures: 11, window_start: base + 300_000 });
  });

  it('counts every one of 30 concurrent failures from four instances', async () => {
    // Prepare: with 29 allowed, the lockout engages only if all 30 are counted, and exactly one crosses.
    const ip = newIp();
    const throttles = instances.map((db) => new DynamoLoginThrottle(db, table, { ...policy, maxFailures: 29 }));
    // Act
    const states = await Promise.all(
      Array.from({ length: 30 }, (_, i) => throttles[i % throttles.length]!.recordFailure(ip, at(0))),
    );
    // Assess
    expect(states.filter((s) => s.locked)).toEqual([{ locked: true, retryAfterSeconds: 900 }]);
    expect(await stored(ip)).toMatchObject({ failures: 30, locked_until: base + 900_000 });
    expect(await throttle.check(ip, at(1_000))).toEqual({ locked: true, retryAfterSeconds: 899 });
  });

  it('counts every concurrent failure that races to open a new window, and locks past the limit', async () => {
    // Prepare: an old window with ten failures, then 30 failures at once after it ended.
    const ip = newIp();
    await fail(ip, 10, () => at(0));
    const throttles = instances.map((db) => new DynamoLoginThrottle(db, table, policy));
    // Act
    const states = await Promise.all(
      Array.from({ length: 30 }, (_, i) => throttles[i % throttles.length]!.recordFailure(ip, at(400_000))),
    );
    // Assess: the first ten of the new window are unlocked, the other twenty see the lockout.
    expect(states.filter((s) => !s.locked)).toHaveLength(10);
    expect(states.filter((s) => s.locked).every((s) => s.retryAfterSeconds === 900)).toBe(true);
    expect(await stored(ip)).toMatchObject({
      failures: 30,
      window_start: base + 400_000,
      locked_until: base + 1_300_000,
    });
  });

  it('never shortens a lockout when an instance with a lagging clock records a failure', async () => {
    // Prepare: locked at 10 s until 910 s.
    const ip = newIp();
    await fail(ip, 11, () => at(10_000));
    // Act: a failure stamped 5 s earlier would lock only until 905 s.
    const lagging = await throttle.recordFailure(ip, at(5_000));
    const late = await throttle.check(ip, at(907_000));
    // Assess
    expect(lagging).toEqual({ locked: true, retryAfterSeconds: 905 });
    expect(late).toEqual({ locked: true, retryAfterSeconds: 3 });
    expect(await stored(ip)).toMatchObject({ failures: 12, locked_until: base + 910_000 });
  });

  it('throttles each address independently', async () => {
    // Prepare
    const [locked, other] = [newIp(), newIp()];
    await fail(locked, 11, () => at(0));
    // Act
    const otherFailure = await throttle.recordFailure(other, at(0));
    const otherCheck = await throttle.check(other, at(0));
    const lockedCheck = await throttle.check(locked, at(0));
    // Assess
    expect(otherFailure).toEqual(UNLOCKED);
    expect(otherCheck).toEqual(UNLOCKED);
    expect(lockedCheck.locked).toBe(true);
  });

  it('keeps a TTL (epoch seconds) past the window and the lockout', async () => {
    // Prepare
    const ip = newIp();
    // Act
    await fail(ip, 11, () => at(0));
    // Assess
    const ttl = (await stored(ip))?.['ttl'] as number;
    expect(Number.isInteger(ttl)).toBe(true);
    expect(ttl).toBeGreaterThanOrEqual((base + 900_000) / 1_000);
    expect(ttl).toBeLessThanOrEqual((base + 900_000) / 1_000 + 120);
  });

  it('refuses a policy it cannot enforce', () => {
    // Act / Assess
    expect(() => new DynamoLoginThrottle(instances[0]!, table, { ...policy, maxFailures: 0 })).toThrow(RangeError);
    expect(() => new DynamoLoginThrottle(instances[0]!, table, { ...policy, windowSeconds: 1.5 })).toThrow(RangeError);
  });
});
