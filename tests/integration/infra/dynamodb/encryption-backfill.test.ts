// The index backfill against DynamoDB Local: items of registered types written without an index entry (as before
// gsi4 existed) are found by the scan and get their entry, page by page from a cursor; an item written since it was
// read keeps what its writer put; a second run finds nothing; items without ciphertexts or of other types are left.
import { randomUUID } from 'node:crypto';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { backfillIndex } from '../../../../domain/encryption/backfill.js';
import type { StoredRecord } from '../../../../domain/encryption/ports.js';
import { AesGcmSecretCipher } from '../../../../infra/crypto/secret-cipher.js';
import { DynamoEncryptionBackfill } from '../../../../infra/dynamodb/encryption-backfill.js';
import { encryptionIndex } from '../../../../infra/dynamodb/encryption-index.js';
import { keys } from '../../../../infra/dynamodb/keys.js';
import { createServiceTable, dynamoClient, uniqueName } from '../../../support/aws.js';

const client = dynamoClient();
const db = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
const table = uniqueName('encfill');
const cipher = new AesGcmSecretCipher({ activeKeyId: 'k1', keys: { k1: Buffer.alloc(32, 1) } });

const trigger = (id = randomUUID()) => ({
  ...keys.trigger(id),
  type: 'trigger',
  id,
  sealedSecret: cipher.encrypt(`s-${id}`, `trigger:${id}`),
});
const put = (item: Record<string, unknown>) => db.send(new PutCommand({ TableName: table, Item: item }));
const itemAt = async ({ pk, sk }: { pk: string; sk: string }) =>
  (await db.send(new GetCommand({ TableName: table, Key: { pk, sk }, ConsistentRead: true }))).Item!;

beforeAll(async () => {
  await createServiceTable(client, table);
});

describe('DynamoEncryptionBackfill', () => {
  it('indexes the items without an entry, page by page across a stop, and a second run finds none', async () => {
    // Prepare
    const legacy = Array.from({ length: 7 }, () => trigger());
    for (const item of legacy) await put(item);
    const indexed = trigger();
    await put({ ...indexed, ...encryptionIndex('trigger', indexed) });
    await put({ ...keys.trigger(randomUUID()), type: 'trigger', id: 'no-secret' });
    await put({ pk: `TARGET#${randomUUID()}`, sk: 'TARGET', type: 'target', sealedSecret: 'v1.k1.a.b.c' });
    const backfill = new DynamoEncryptionBackfill(db, table, 3);
    let pages = 0;

    // Act
    const first = await backfillIndex(backfill, { concurrency: 2, shouldStop: () => ++pages >= 2 });
    const rest = await backfillIndex(backfill, { concurrency: 2, cursor: first.next! });
    const again = await backfillIndex(backfill, { concurrency: 2 });

    // Assess
    expect(first.next).toEqual(expect.any(String));
    expect(first.indexed + rest.indexed).toBe(7);
    expect(first.found + rest.found).toBe(7); // not the indexed one, the one without a secret, the target
    expect(rest.next).toBeUndefined();
    expect(again).toMatchObject({ found: 0, indexed: 0, next: undefined });
    for (const item of legacy)
      expect(await itemAt(item)).toMatchObject({
        gsi4pk: 'ENC#k1',
        gsi4sk: `trigger#${item.pk}#${item.sk}`,
        encValues: { k1: 1 },
      });
  });

  it('leaves an item written since it was read (its writer put its own entry)', async () => {
    // Prepare
    const item = trigger();
    await put(item);
    const backfill = new DynamoEncryptionBackfill(db, table);
    const read: StoredRecord = { recordType: 'trigger', key: { pk: item.pk, sk: item.sk }, item };
    const rewritten = { ...item, sealedSecret: cipher.encrypt('new', `trigger:${item.id}`) };
    await put(rewritten); // written again, here without an entry, by a writer the backfill raced

    // Act
    const added = await backfill.addEntry(read);

    // Assess
    expect(added).toBe(false);
    expect(await itemAt(item)).not.toHaveProperty('gsi4pk');
  });
});
