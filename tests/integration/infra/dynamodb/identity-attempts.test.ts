// The access-control writes of the identity repositories against DynamoDB Local: pending two-factor tokens
// (attempts and single use), the per-user two-factor throttle's release, single-use recovery codes, and user edits
// that write only the fields they name, conditioned on the revision every write increments.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { User } from '../../../../domain/identity/types.js';
import { makeDynamoClient } from '../../../../infra/aws-clients.js';
import { keys } from '../../../../infra/dynamodb/keys.js';
import { DynamoLoginThrottle } from '../../../../infra/dynamodb/login-throttle.js';
import { DynamoPendingTwoFactorAttempts } from '../../../../infra/dynamodb/pending-two-factor-repository.js';
import { DynamoUserRepository } from '../../../../infra/dynamodb/user-repository.js';
import { createTestTable, dynamoClient, uniqueName } from '../../../support/aws.js';

const table = uniqueName('identity-attempts');
const ENDPOINT = 'AWS_ENDPOINT_URL_DYNAMODB';
const previousEndpoint = process.env[ENDPOINT];
let db: ReturnType<typeof makeDynamoClient>;

beforeAll(async () => {
  await createTestTable(dynamoClient(), table);
  process.env[ENDPOINT] = inject('dynamoEndpoint');
  db = makeDynamoClient({ AWS_REGION: 'us-east-1' });
});

afterAll(() => {
  db.destroy();
  if (previousEndpoint === undefined) delete process.env[ENDPOINT];
  else process.env[ENDPOINT] = previousEndpoint;
});

const inAnHour = () => new Date(Date.now() + 3_600_000);

describe('DynamoPendingTwoFactorAttempts', () => {
  it('allows max attempts to concurrent callers, and one success', async () => {
    // Prepare
    const pending = new DynamoPendingTwoFactorAttempts(db, table);
    const token = randomUUID();
    // Act
    const reserved = await Promise.all(Array.from({ length: 12 }, () => pending.reserve(token, 5, inAnHour())));
    // Assess
    expect(reserved.filter(Boolean)).toHaveLength(5);
    expect(await Promise.all([pending.consume(token), pending.consume(token), pending.consume(token)])).toEqual(
      expect.arrayContaining([true, false, false]),
    );
    const other = randomUUID();
    expect(await pending.reserve(other, 5, inAnHour())).toBe(true);
    expect(await pending.consume(other)).toBe(true);
    expect(await pending.reserve(other, 5, inAnHour())).toBe(false);
    expect(await pending.consume(randomUUID())).toBe(false);
  });
});

describe('the two-factor throttle', () => {
  it('takes back released attempts and locks after the maximum of 20 concurrent ones', async () => {
    const throttle = new DynamoLoginThrottle(
      db,
      table,
      { maxFailures: 10, windowSeconds: 900, lockoutSeconds: 900 },
      keys.twoFactorThrottle,
    );
    const user = randomUUID();
    const now = new Date();
    for (let i = 0; i < 9; i += 1) await throttle.recordFailure(user, now);
    await throttle.release(user, now);
    await throttle.release(user, now);
    // 7 counted: three more pass, the one after them locks.
    const states = await Promise.all(Array.from({ length: 20 }, () => throttle.recordFailure(user, now)));
    expect(states.filter((s) => !s.locked)).toHaveLength(3);
    expect(await throttle.check(user, now)).toEqual({ locked: true, retryAfterSeconds: 900 });
    // Another user, and the login throttle of an address with the same text, are not affected.
    expect((await throttle.check(randomUUID(), now)).locked).toBe(false);
    expect(
      (
        await new DynamoLoginThrottle(db, table, { maxFailures: 10, windowSeconds: 60, lockoutSeconds: 300 }).check(
          user,
          now,
        )
      ).locked,
    ).toBe(false);
  });

  it('never releases below zero', async () => {
    const throttle = new DynamoLoginThrottle(
      db,
      table,
      { maxFailures: 1, windowSeconds: 900, lockoutSeconds: 900 },
      keys.twoFactorThrottle,
    );
    const user = randomUUID();
    const now = new Date();
    await throttle.release(user, now);
    await throttle.recordFailure(user, now);
    await throttle.release(user, now);
    await throttle.release(user, now);
    expect((await throttle.recordFailure(user, now)).locked).toBe(false);
    expect((await throttle.recordFailure(user, now)).locked).toBe(true);
  });
});

describe('DynamoUserRepository edits', () => {
  const aUser = (): User => {
    const id = randomUUID();
    const now = new Date().toISOString();
    return {
      id,
      shortId: id.slice(0, 8),
      email: `${id}@example.com`,
      username: id,
      displayName: 'Ada',
      status: 'active',
      roles: ['user'],
      tenantId: null,
      passwordHash: 'x',
      twoFactor: { enabled: false, secret: 'enc', lastStep: null },
      emailVerified: false,
      tokensValidAfter: 0,
      revision: 0,
      createdAt: now,
      updatedAt: now,
      lastLoginAt: null,
    };
  };

  it('write only the named fields, and only at the revision read', async () => {
    // Prepare: the admin reads the user, then 2FA is enabled and a login recorded
    const users = new DynamoUserRepository(db, table);
    const user = aUser();
    await users.create(user);
    const seen = (await users.get(user.id)) as User;
    expect(seen.revision).toBe(0);
    expect(
      await users.setTwoFactor(
        user.id,
        { enabled: true, secret: 'enc', lastStep: 5 },
        { enabled: false, lastStep: null },
      ),
    ).toBe(true);
    await users.recordLogin(user.id, new Date());
    // Act + Assess: the stale edit is refused; one on the current revision writes its field alone
    expect(await users.update(seen, { displayName: 'Stale' }, new Date())).toBe(false);
    const current = (await users.get(user.id)) as User;
    expect(current.revision).toBe(2);
    expect(await users.update(current, { displayName: 'Ada L.', tenantId: null }, new Date())).toBe(true);
    expect(await users.get(user.id)).toMatchObject({
      displayName: 'Ada L.',
      twoFactor: { enabled: true, lastStep: 5 },
      lastLoginAt: expect.any(String),
      revision: 3,
    });
  });

  it('read items written before revisions as revision 0, and edit them', async () => {
    const users = new DynamoUserRepository(db, table);
    const user = aUser();
    const { revision: _revision, ...withoutRevision } = user;
    await users.create(withoutRevision as User);
    const seen = (await users.get(user.id)) as User;
    expect(seen.revision).toBe(0);
    expect(await users.update(seen, { status: 'locked' }, new Date())).toBe(true);
    expect(await users.get(user.id)).toMatchObject({ status: 'locked', revision: 1 });
  });

  it('use a recovery code once: of concurrent uses exactly one wins, and only while 2FA is on', async () => {
    // Prepare
    const users = new DynamoUserRepository(db, table);
    const user = aUser();
    await users.create(user);
    expect(await users.useRecoveryCode(user.id, 'a'.repeat(64))).toBe(false); // none issued
    const [first, second] = ['a'.repeat(64), 'b'.repeat(64)] as [string, string];
    expect(
      await users.setTwoFactor(
        user.id,
        { enabled: true, secret: 'enc', lastStep: 5, recoveryCodes: [first, second] },
        { enabled: false, lastStep: null },
      ),
    ).toBe(true);
    // Act
    const used = await Promise.all(Array.from({ length: 6 }, () => users.useRecoveryCode(user.id, first)));
    // Assess
    expect(used.filter(Boolean)).toHaveLength(1);
    expect((await users.get(user.id))?.twoFactor).toMatchObject({ enabled: true, recoveryCodes: [second] });
    expect(
      await users.setTwoFactor(
        user.id,
        { enabled: false, secret: null, lastStep: null, recoveryCodes: [] },
        { enabled: true, lastStep: 5 },
      ),
    ).toBe(true);
    expect(await users.useRecoveryCode(user.id, second)).toBe(false);
    expect((await users.get(user.id))?.twoFactor.recoveryCodes).toEqual([]);
  });
});
