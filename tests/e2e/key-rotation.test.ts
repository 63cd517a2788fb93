// Key rotation on the whole local stack: a few thousand encrypted records (and some written before the encryption
// index, without an entry), `npm run rotate-keys` killed (SIGKILL) in the middle and started again, reads decrypting
// throughout (readers following the key file as the handlers do, logins, a 2FA code checked against a secret set up
// before the rotation), the stats over HTTP showing the progress and finally nothing under the old key, the old key
// refused for retirement while values remain and removed after, and the new key verified over HTTP.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyRingCipher, keyRingSource } from '../../infra/crypto/key-ring-source.js';
import { AesGcmSecretCipher, parseKeyring } from '../../infra/crypto/secret-cipher.js';
import { encryptionIndex } from '../../infra/dynamodb/encryption-index.js';
import { keys } from '../../infra/dynamodb/keys.js';
import { LOCAL_CREDENTIALS } from '../../local/emulators.js';
import { ROOT } from '../../local/service-definition.js';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const INDEXED = 3000; // records written with their index entry
const LEGACY = 300; // records written as before the index existed: found by the backfill
const CONTEXT = (id: string) => `trigger:${id}`;

let stack: Stack;
let secretsDir: string;
let keyFile: string;
let db: DynamoDBDocumentClient;
let admin: string;

const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { ...(token === undefined ? {} : { token }), body });
const stats = async () => {
  const reply = await call('GET', '/admin/encryption/stats', admin);
  expect(reply.status).toBe(200);
  return reply.json as {
    active_key_id: string;
    keys: { key_id: string; status: string; records: number; values: number }[];
    total: { records: number; values: number; retired_values: number };
    removable_key_ids: string[];
    tables: { record_type: string; records: number; values: number; retired_values: number }[];
  };
};
const ring = async () => (JSON.parse(await readFile(keyFile, 'utf8')) as { encryptionKeys: string }).encryptionKeys;
const keyIdsOf = (text: string) => text.split(',').map((entry) => entry.split(':')[0]);

/** `npm run rotate-keys` against this stack (one process: node --import tsx, so a SIGKILL kills all of it). */
const rotateKeys = (args: readonly string[] = []) => {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'local/rotate-keys.ts',
      '--keys-file',
      keyFile,
      '--endpoint',
      stack.dynamoEndpoint,
      '--table',
      stack.env['TABLE_NAME']!,
      '--settle-ms',
      '1500', // the handlers look at the key file at most once a second
      ...args,
    ],
    { cwd: ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => void (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => void (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
};

const waitFor = async (check: () => boolean, what: string, ms = 60_000) => {
  for (const deadline = Date.now() + ms; !check();) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

/** Writes `count` trigger-like records holding one ciphertext each, 25 per BatchWriteItem, 8 batches at once. */
const seed = async (cipher: AesGcmSecretCipher, count: number, indexed: boolean, ids: string[]) => {
  const items = Array.from({ length: count }, () => {
    const id = randomUUID();
    ids.push(id);
    const item = {
      ...keys.trigger(id),
      type: 'trigger',
      id,
      sealedSecret: cipher.encrypt(`secret-${id}`, CONTEXT(id)),
    };
    return indexed ? { ...item, ...encryptionIndex('trigger', item) } : item;
  });
  const batches = Array.from({ length: Math.ceil(items.length / 25) }, (_, i) => items.slice(i * 25, i * 25 + 25));
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      let request: Record<string, unknown>[] | undefined = batches[next++]!.map((Item) => ({ PutRequest: { Item } }));
      while (request !== undefined && request.length > 0) {
        const answer = await db.send(new BatchWriteCommand({ RequestItems: { [stack.env['TABLE_NAME']!]: request } }));
        request = answer.UnprocessedItems?.[stack.env['TABLE_NAME']!] as Record<string, unknown>[] | undefined;
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
};

beforeAll(async () => {
  secretsDir = await mkdtemp(join(tmpdir(), 'deployer-rotation-'));
  keyFile = join(secretsDir, 'secrets.json');
  stack = await startStack({ port: 0, namePrefix: `${uniqueName('rot')}-`, bootstrapAdmin: ADMIN, secretsDir });
  db = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: stack.dynamoEndpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS }),
  );
  admin = (await api.login(ADMIN)).token;
});

afterAll(async () => {
  await stack?.stop();
  db?.destroy();
  if (secretsDir !== undefined) await rm(secretsDir, { recursive: true, force: true });
});

describe('npm run rotate-keys', () => {
  it('re-encrypts every value under a new key with reads working throughout, survives a SIGKILL, retires the old key only when unused', async () => {
    // Prepare: records under the stack's key, some without an index entry; a user with a 2FA secret set up
    const { generate } = await import('otplib');
    const t0 = Date.now();
    const marks: Record<string, number> = {};
    const mark = (name: string) => void (marks[name] = (Date.now() - t0) / 1000);
    const initial = await ring();
    const [oldKeyId] = keyIdsOf(initial) as [string];
    const cipher = new AesGcmSecretCipher(parseKeyring(initial));
    const ids: string[] = [];
    const seededAt = Date.now();
    await seed(cipher, INDEXED, true, ids);
    await seed(cipher, LEGACY, false, ids);
    const seedSeconds = (Date.now() - seededAt) / 1000;
    await createUser('rotation-2fa@example.com', 'rotation-password', ['user']);
    const user = (await api.login({ email: 'rotation-2fa@example.com', password: 'rotation-password' })).token;
    const setup = await call('POST', '/auth/2fa/setup', user);
    expect(setup.status).toBe(200);
    const before = await stats();
    mark('prepared');

    // Readers as the handlers read: the key file followed as it changes, every value decrypted and compared.
    const reader = new KeyRingCipher(keyRingSource(keyFile, () => initial));
    const reads = {
      ok: 0,
      failed: [] as string[],
      logins: 0,
      loginFailures: [] as number[],
      activeSeen: new Set<string>(),
    };
    let reading = true;
    const readLoop = async () => {
      while (reading) {
        const id = ids[Math.floor(Math.random() * ids.length)]!;
        const { Item } = await db.send(
          new GetCommand({ TableName: stack.env['TABLE_NAME']!, Key: keys.trigger(id), ConsistentRead: true }),
        );
        try {
          if (reader.decrypt(String(Item?.['sealedSecret']), CONTEXT(id)) === `secret-${id}`) reads.ok += 1;
          else reads.failed.push(id);
        } catch (error) {
          reads.failed.push(`${id}: ${(error as Error).message}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 10)); // some 100 reads a second each: DynamoDB Local shares 2 cores
      }
    };
    const httpLoop = async () => {
      while (reading) {
        const login = await call('POST', '/auth/login', undefined, ADMIN);
        if (login.status === 200) reads.logins += 1;
        else reads.loginFailures.push(login.status);
        reads.activeSeen.add((await stats()).active_key_id);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    };
    const readers = [readLoop(), readLoop(), readLoop(), httpLoop()];

    // Act 1: rotate, killed once it has re-encrypted some records
    const first = rotateKeys(['--concurrency', '1']);
    await waitFor(() => /pass 1: [1-9]\d*\/\d+ records/.test(first.output()), 'the first progress line');
    first.child.kill('SIGKILL');
    await first.exited;
    mark('killed');
    const killedAt = first.output();
    const middle = await stats();
    const refused = rotateKeys(['--retire', oldKeyId]);
    const refusedCode = await refused.exited;
    mark('refused');

    // Act 2: started again, it finishes
    const second = rotateKeys(['--concurrency', '16']);
    const secondCode = await second.exited;
    mark('finished');
    const afterRing = await ring();
    const [newKeyId] = keyIdsOf(afterRing) as [string];
    await new Promise((resolve) => setTimeout(resolve, 1500)); // the handlers look at the key file once a second
    const after = await stats();
    const enabled = await call('POST', '/auth/2fa/enable', user, {
      code: await generate({ secret: setup.json.secret as string }),
    });
    const verify = await call('POST', '/admin/encryption/verify', admin, {
      key: afterRing.split(',').find((entry) => entry.startsWith(`${newKeyId}:`)),
    });

    // Act 3: the old key retired, readers still reading
    const retire = rotateKeys(['--retire', oldKeyId]);
    const retireCode = await retire.exited;
    mark('retired');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    reading = false;
    await Promise.all(readers);
    const retired = await stats();
    const finalRing = await ring();

    // Assess: the kill came in the middle, before the end
    expect(killedAt).toMatch(/Backfill done .* 300 indexed/);
    expect(killedAt).not.toContain('Done in');
    // the stats in the middle: the new key active, values under both
    expect(middle.active_key_id).not.toBe(oldKeyId);
    expect(middle.keys.find((k) => k.key_id === oldKeyId)!.values).toBeGreaterThan(0);
    expect(middle.keys.find((k) => k.key_id === middle.active_key_id)!.values).toBeGreaterThan(0);
    // retirement refused while values remain, with the count
    expect(refusedCode).toBe(3);
    expect(refused.output()).toMatch(
      new RegExp(`Refused: [1-9]\\d* values in [1-9]\\d* records are still under "${oldKeyId}"`),
    );
    // the restart resumed the same rotation (no third key) and finished it
    expect(secondCode).toBe(0);
    expect(second.output()).not.toContain('Added key');
    expect(second.output()).toMatch(/Done in/);
    expect(keyIdsOf(afterRing)).toEqual([middle.active_key_id, oldKeyId]);
    expect(newKeyId).toBe(middle.active_key_id);
    // stats: before only the indexed records were seen; after, every one (the backfill), all under the new key
    expect(before.active_key_id).toBe(oldKeyId);
    expect(before.tables.find((t) => t.record_type === 'trigger')!.records).toBe(INDEXED);
    expect(after.tables.find((t) => t.record_type === 'trigger')!.records).toBe(INDEXED + LEGACY);
    expect(after.active_key_id).toBe(newKeyId);
    expect(after.total.retired_values).toBe(0);
    expect(after.keys).toEqual(
      expect.arrayContaining([
        { key_id: newKeyId, status: 'active', records: after.total.records, values: after.total.values },
        { key_id: oldKeyId, status: 'retired', records: 0, values: 0 },
      ]),
    );
    expect(after.keys).toHaveLength(2);
    expect(after.removable_key_ids).toEqual([oldKeyId]);
    // the handlers decrypt a secret set up before the rotation, and verify passes with the new key
    expect([enabled.status, enabled.json.error]).toEqual([200, undefined]);
    expect(verify.status).toBe(200);
    expect(verify.json).toMatchObject({ key_id: newKeyId, result: 'ok', in_keyring: true, failed: 0 });
    expect(verify.json.checked).toBe(after.total.values);
    // retired: the ring has the new key alone, the stats know no other
    expect(retireCode).toBe(0);
    expect(keyIdsOf(finalRing)).toEqual([newKeyId]);
    expect(retired.keys.map((k) => k.key_id)).toEqual([newKeyId]);
    // every read decrypted, throughout
    expect(reads.failed).toEqual([]);
    expect(reads.ok).toBeGreaterThan(100);
    expect(reads.loginFailures).toEqual([]);
    expect(reads.logins).toBeGreaterThan(3);
    expect([...reads.activeSeen].sort()).toEqual([oldKeyId, newKeyId].sort());
    const rate = /(\d+) values in (\d+) records re-encrypted/.exec(second.output());
    process.stdout.write(`timings: ${JSON.stringify(marks)}\n`);
    process.stdout.write(
      `key rotation: seeded ${INDEXED + LEGACY} records in ${seedSeconds.toFixed(1)} s; ${reads.ok} reads; ` +
        `killed at: ${killedAt
          .split('\n')
          .filter((l) => l.includes('pass'))
          .at(-1)}; restart: ${rate?.[0]}\n` +
        second.output(),
    );
  }, 240_000); // about 50 s on an idle 2-core machine; DynamoDB Local slows down a lot when the cores are shared
});
