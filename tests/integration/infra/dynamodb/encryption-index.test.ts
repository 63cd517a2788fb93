// The encryption index against DynamoDB Local: every write path that stores a ciphertext puts its item in the sparse
// index (gsi4) under the key ids it needs, and a write without one takes it out; the store reads only indexed items,
// rewrites ciphertexts only if they are still the ones read, and the verify slot admits one attempt per window.
import { randomUUID } from 'node:crypto';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { encryptedValues } from '../../../../domain/encryption/fields.js';
import type { IndexEntry } from '../../../../domain/encryption/ports.js';
import { encryptionStats } from '../../../../domain/encryption/stats.js';
import { AesGcmSecretCipher } from '../../../../infra/crypto/secret-cipher.js';
import { DynamoAnalysisSettingsStore } from '../../../../infra/dynamodb/analysis-repository.js';
import { DynamoCommandRepository } from '../../../../infra/dynamodb/command-repository.js';
import { deploymentItem } from '../../../../infra/dynamodb/deployment-repository.js';
import { DynamoEncryptionIndex, DynamoVerifySlots } from '../../../../infra/dynamodb/encryption-store.js';
import { keys } from '../../../../infra/dynamodb/keys.js';
import { DynamoPendingRequestRepository } from '../../../../infra/dynamodb/pending-request-repository.js';
import { DynamoUserRepository } from '../../../../infra/dynamodb/user-repository.js';
import { JoseTokenService } from '../../../../infra/tokens/jose-token-service.js';
import { aCommand } from '../../../fakes/commands.js';
import { aDeployment, aDraft, aPendingRequest, aPlan } from '../../../fakes/deployments.js';
import { aUser } from '../../../fakes/identity.js';
import { createServiceTable, dynamoClient, uniqueName } from '../../../support/aws.js';

const client = dynamoClient();
const db = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
const table = uniqueName('encidx');
const K1 = Buffer.alloc(32, 1);
const K2 = Buffer.alloc(32, 2);
const v1 = new AesGcmSecretCipher({ activeKeyId: 'k1', keys: { k1: K1 } });
const v2 = new AesGcmSecretCipher({ activeKeyId: 'k2', keys: { k1: K1, k2: K2 } });
const index = new DynamoEncryptionIndex(db, table, 3); // small pages: every test crosses page boundaries

const allEntries = async (): Promise<IndexEntry[]> => {
  const entries: IndexEntry[] = [];
  for await (const page of index.entries()) entries.push(...page);
  return entries;
};
const entryOf = async (pk: string) => (await allEntries()).find((e) => e.key.pk === pk);
const itemAt = async (key: { pk: string; sk: string }) =>
  (await db.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item!;

const secretDraft = (cipher: AesGcmSecretCipher) => {
  const sealed = () => `enc:${cipher.encrypt('hunter2', 'deployment-variable')}`;
  return aDraft({
    config: { ...aDraft().config, variables: { TOKEN: sealed(), REGION: 'eu' } },
    plan: aPlan({
      resolvedVariables: { TOKEN: { value: sealed(), secret: true }, REGION: { value: 'eu', secret: false } },
    }),
  });
};

beforeAll(async () => {
  await createServiceTable(client, table);
});

describe('the encryption index', () => {
  it("follows a user's TOTP secret: in when set up, moved when replaced, out when removed", async () => {
    // Prepare
    const users = new DynamoUserRepository(db, table);
    const user = aUser({ id: randomUUID(), email: `${randomUUID()}@example.com`, username: randomUUID() });
    await users.create(user);
    const pk = keys.user(user.id).pk;
    const before = await entryOf(pk);

    // Act
    const off = { enabled: false, lastStep: null };
    await users.setTwoFactor(user.id, { ...off, secret: v1.encrypt('S', `totp:${user.id}`) }, off);
    const first = await entryOf(pk);
    await users.setTwoFactor(user.id, { ...off, secret: v2.encrypt('S', `totp:${user.id}`) }, off);
    const second = await entryOf(pk);
    await users.setTwoFactor(user.id, { ...off, secret: null }, off);
    const removed = await entryOf(pk);

    // Assess
    expect(before).toBeUndefined();
    expect(first).toEqual({ recordType: 'user', key: keys.user(user.id), values: { k1: 1 } });
    expect(second?.values).toEqual({ k2: 1 });
    expect(removed).toBeUndefined();
    expect(await users.get(user.id)).not.toHaveProperty('encValues'); // index attributes never reach the domain
  });

  it('indexes deployments, pending requests, commands, analysis settings and signing keys as they are written', async () => {
    // Prepare
    const deploymentId = randomUUID();
    const requestId = randomUUID();
    const commandId = randomUUID();
    const draft = secretDraft(v1);

    // Act
    await db.send(
      new PutCommand({ TableName: table, Item: deploymentItem(aDeployment({ ...draft, id: deploymentId })) }),
    );
    await new DynamoPendingRequestRepository(db, table).create(aPendingRequest({ id: requestId, draft }));
    await new DynamoCommandRepository(db, table).enqueue(
      aCommand({
        id: commandId,
        targetId: randomUUID(),
        deploymentId,
        variables: { TOKEN: draft.config.variables['TOKEN']!, REGION: 'eu' },
        secretVariables: ['TOKEN'],
        sealedSecrets: true,
      }),
    );
    await new DynamoAnalysisSettingsStore(db, table).save({
      provider_api_key: v2.encrypt('sk-1', 'analysis-provider-api-key'),
    });
    const tokens = new JoseTokenService(db, table, v2, 'http://localhost', { now: () => new Date() });
    await tokens.issue({ type: 'access', userId: 'u', tenantId: null, issuedAt: Date.now() }, 60); // makes the signing key

    // Assess
    expect((await entryOf(keys.deployment(deploymentId).pk))?.values).toEqual({ k1: 2 });
    expect((await entryOf(keys.pendingRequest(requestId).pk))?.values).toEqual({ k1: 2 });
    expect((await entryOf(keys.command(commandId).pk))?.values).toEqual({ k1: 1 });
    expect((await entryOf(keys.analysisSettings().pk))?.values).toEqual({ k2: 1 });
    const signing = (await allEntries()).filter((e) => e.recordType === 'signing_key');
    expect(signing.map((e) => e.values)).toEqual([{ k2: 1 }]);
  });

  it('rewrites ciphertexts only while they are the ones read, moving the item in the index with them', async () => {
    // Prepare
    const deployment = aDeployment({ ...secretDraft(v1), id: randomUUID() });
    await db.send(new PutCommand({ TableName: table, Item: deploymentItem(deployment) }));
    const entry = (await entryOf(keys.deployment(deployment.id).pk))!;
    const [record] = await index.records([entry]);
    const values = encryptedValues('deployment', record!.item);
    const rotate = values.map((v) => ({
      path: v.path,
      from: v.stored,
      to: `${v.prefix}${v2.encrypt(v1.decrypt(v.ciphertext, v.context), v.context)}`,
    }));

    // Act
    const first = await index.replace(record!, rotate);
    const stale = await index.replace(record!, rotate); // the same read again: its ciphertexts are gone

    // Assess
    expect([first, stale]).toEqual([true, false]);
    expect((await entryOf(keys.deployment(deployment.id).pk))?.values).toEqual({ k2: 2 });
    const item = await itemAt(keys.deployment(deployment.id));
    for (const value of encryptedValues('deployment', item)) {
      expect(value.keyId).toBe('k2');
      expect(v2.decrypt(value.ciphertext, value.context)).toBe('hunter2');
    }
    expect(item['state']).toBe('running'); // the rest of the item untouched
  });

  it('counts from the index in stats without reading an item', async () => {
    const stats = await encryptionStats({
      index,
      keyring: async () => ({ activeKeyId: 'k2', keyIds: ['k2', 'k1'] }),
      clock: { now: () => new Date() },
    });
    expect(stats.total.records).toBe((await allEntries()).length);
    expect(stats.keys.find((k) => k.key_id === 'k1')?.status).toBe('retired');
    expect(stats.total.retired_records).toBeGreaterThan(0);
  });
});

describe('the verify slots', () => {
  it('admit one attempt per caller until the slot ends, also when attempts race', async () => {
    // Prepare
    const slots = new DynamoVerifySlots(db, table);
    const now = new Date('2026-03-01T00:00:00.000Z');
    const hour = new Date(now.getTime() + 3_600_000);

    // Act
    const race = await Promise.all(Array.from({ length: 5 }, () => slots.take('admin-1', now, hour)));
    const later = await slots.take('admin-1', new Date(now.getTime() + 60_000), new Date(hour.getTime() + 60_000));
    const afterwards = await slots.take('admin-1', hour, new Date(hour.getTime() + 3_600_000));

    // Assess
    expect(race.filter((r) => 'taken' in r)).toHaveLength(1);
    expect(race.filter((r) => 'takenUntil' in r).map((r) => ('takenUntil' in r ? r.takenUntil : null))).toEqual(
      Array(4).fill(hour),
    );
    expect(later).toEqual({ takenUntil: hour });
    expect(afterwards).toEqual({ taken: true });
  });
});
