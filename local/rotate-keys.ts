// `npm run rotate-keys`: rotates the local stack's data key (docs/decisions.md, "Key rotation"), against the running
// stack's DynamoDB (found in .local/stack.lock) and key file (.local/secrets.json), which the stack's handlers follow
// (infra/crypto/key-ring-source.ts).
//
//   rotate (default)  backfill the index once -> add a new key, decrypt-only -> wait for every reader -> make it
//                     active -> wait for every writer -> re-encrypt everything under other keys, pass after pass.
//                     The state is in the key file: killed and started again, it resumes (it never adds a second key).
//   --backfill        only the index backfill (a Scan of the whole table).
//   --retire <id>     removes a key from the ring, only when the index shows no value under it (else exit 3).
import { parseArgs } from 'node:util';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { backfillIndex } from '../domain/encryption/backfill.js';
import { decideRotation, reencryptAll, type RotationState } from '../domain/encryption/rotation.js';
import { summarize } from '../domain/encryption/stats.js';
import type { IndexEntry } from '../domain/encryption/ports.js';
import { MARSHALL_OPTIONS } from '../infra/aws-clients.js';
import { CHECK_EVERY_MS } from '../infra/crypto/key-ring-source.js';
import {
  newKeyEntry,
  nextKeyId,
  ringKeyIds,
  withKeyActive,
  withKeyAdded,
  withKeyRemoved,
} from '../infra/crypto/key-ring-text.js';
import { AesGcmSecretCipher, parseKeyring } from '../infra/crypto/secret-cipher.js';
import { DynamoEncryptionBackfill } from '../infra/dynamodb/encryption-backfill.js';
import { DynamoEncryptionIndex } from '../infra/dynamodb/encryption-store.js';
import { systemClock } from '../infra/system/clock.js';
import { LOCAL_CREDENTIALS } from './emulators.js';
import { runningInMemoryStacks } from './in-memory-stacks.js';
import { readKeyFileState, writeKeyFileState, type KeyFile } from './key-file.js';
import { keyFilePath } from './secrets.js';
import { ROOT } from './service-definition.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true'; // see README, "Node versions"

const DATA_DIR = join(ROOT, '.local');

const USAGE = `Usage: npm run rotate-keys [-- options]

Rotates the local stack's data key: adds a new key (decrypt-only first, active once every reader has it) and
re-encrypts every value under other keys. Interrupted, run it again: it resumes.

Options:
  --backfill        only index the items written before the encryption index existed (a scan of the table)
  --retire <id>     remove key <id> from the ring, only if no value uses it
  --concurrency N   writes in flight at once (default 8)
  --settle-ms N     how long every process gets to pick up a ring change (default ${3 * CHECK_EVERY_MS})
  --keys-file F     the key file (default .local/secrets.json)
  --endpoint URL    DynamoDB (default: the running stack's, from .local/stack.lock)
  --table NAME      the table (default: the running stack's)
  -h, --help        show this help
`;

const say = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class Refused extends Error {}

const options = (() => {
  try {
    return parseArgs({
      options: {
        backfill: { type: 'boolean', default: false },
        retire: { type: 'string' },
        concurrency: { type: 'string', default: '8' },
        'settle-ms': { type: 'string', default: String(3 * CHECK_EVERY_MS) },
        'keys-file': { type: 'string' },
        endpoint: { type: 'string' },
        table: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      allowPositionals: false,
    }).values;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
})();

/** The running stack's DynamoDB endpoint and table, unless given. */
const target = async () => {
  const lock = await readFile(join(DATA_DIR, 'stack.lock'), 'utf8').then(
    (text) => JSON.parse(text) as { dynamoEndpoint?: string; tableName?: string },
    () => ({}) as { dynamoEndpoint?: string; tableName?: string },
  );
  const endpoint = options.endpoint ?? lock.dynamoEndpoint;
  const table = options.table ?? lock.tableName;
  if (endpoint === undefined || table === undefined) {
    const inMemory = await runningInMemoryStacks();
    if (inMemory.length > 0)
      throw new Refused(
        `${inMemory.length === 1 ? 'The running stack is' : 'The running stacks are'} in memory ` +
          `(npm start -- --in-memory: ${inMemory.map((s) => `pid ${s.pid}, port ${s.port}`).join('; ')}): ` +
          'its data and its key live in memory only and go with it, so there is nothing to rotate. ' +
          'Keys are rotated on a stack that keeps its data (npm start, data in .local/).',
      );
    throw new Error(
      'No running stack found (.local/stack.lock): start it with npm start, or give --endpoint and --table',
    );
  }
  return { endpoint, table };
};

/** One run: its settings, its table, and the key file's state as last saved. */
interface Run {
  readonly file: string;
  readonly concurrency: number;
  readonly settleMs: number;
  readonly db: DynamoDBDocumentClient;
  readonly table: string;
  readonly index: DynamoEncryptionIndex;
  state: KeyFile;
}

const save = async (run: Run, next: KeyFile) => {
  await writeKeyFileState(run.file, next);
  run.state = next;
};

/** Indexes the encrypted items written before the encryption index (a scan of the whole table). */
const backfill = async (run: Run) => {
  const since = Date.now();
  say('Backfill: indexing encrypted items written before the encryption index (a scan of the whole table)...');
  const report = await backfillIndex(new DynamoEncryptionBackfill(run.db, run.table), {
    concurrency: run.concurrency,
    onPage: (r) => say(`  backfill: ${r.scanned} items read, ${r.indexed} indexed`),
  });
  await save(run, { ...run.state, backfilledAt: new Date().toISOString() });
  say(
    `Backfill done in ${((Date.now() - since) / 1000).toFixed(1)} s: ${report.scanned} items read, ` +
      `${report.found} without an entry, ${report.indexed} indexed, ${report.skipped} written meanwhile.`,
  );
};

/** --retire: removes a key from the ring, refused while the index shows a value under it or a rotation runs. */
const retire = async (run: Run, keyId: string) => {
  const ring = ringKeyIds(run.state.encryptionKeys);
  if (!ring.keyIds.includes(keyId))
    throw new Refused(`Key "${keyId}" is not in the key ring (${ring.keyIds.join(', ')})`);
  if (ring.activeKeyId === keyId) throw new Refused(`Key "${keyId}" is the active key: rotate first`);
  if (run.state.backfilledAt === undefined) await backfill(run);
  const entries: IndexEntry[] = [];
  for await (const page of run.index.entries()) entries.push(...page);
  const stats = summarize(entries, ring, new Date());
  const used = stats.keys.find((k) => k.key_id === keyId);
  if (used !== undefined && used.values > 0)
    throw new Refused(
      `Refused: ${used.values} values in ${used.records} records are still under "${keyId}". ` +
        'Run npm run rotate-keys first (or let it finish).',
    );
  if (run.state.rotation !== undefined)
    throw new Refused(
      `A rotation to "${run.state.rotation.keyId}" is in progress: run npm run rotate-keys to finish it first`,
    );
  await save(run, { ...run.state, encryptionKeys: withKeyRemoved(run.state.encryptionKeys, keyId) });
  say(
    `Key "${keyId}" removed from the ring: no value uses it. Ring: ${ringKeyIds(run.state.encryptionKeys).keyIds.join(', ')}.`,
  );
};

/** The last step of a rotation: every value under another key re-encrypted, pass after pass; the state cleared. */
const reencrypt = async (run: Run, keyId: string, started: number) => {
  say(`Re-encrypting every value under other keys than "${keyId}" (${run.concurrency} writes at once)...`);
  const report = await reencryptAll(
    {
      index: run.index,
      cipher: new AesGcmSecretCipher(parseKeyring(run.state.encryptionKeys)),
      activeKeyId: keyId,
      clock: systemClock,
    },
    {
      concurrency: run.concurrency,
      onProgress: (p) =>
        say(
          `  pass ${p.pass}: ${p.done}/${p.total} records, ${p.rewritten} rewritten, ${Math.round(p.valuesPerSecond)} values/s`,
        ),
    },
  );
  if (!report.complete) throw new Error(`Re-encryption did not settle after ${report.passes} passes; run it again`);
  await save(run, {
    encryptionKeys: run.state.encryptionKeys,
    ...(run.state.backfilledAt === undefined ? {} : { backfilledAt: run.state.backfilledAt }),
  });
  const seconds = (Date.now() - started) / 1000;
  const retired = ringKeyIds(run.state.encryptionKeys).keyIds.filter((id) => id !== keyId);
  say(
    `Done in ${seconds.toFixed(1)} s: ${report.values} values in ${report.rewritten} records re-encrypted under ` +
      `"${keyId}" in ${report.passes} ${report.passes === 1 ? 'pass' : 'passes'} (${report.conflicts} written meanwhile, taken again).` +
      (report.undecryptable > 0 ? ` ${report.undecryptable} values no key of the ring decrypts were left.` : ''),
  );
  if (retired.length > 0)
    say(
      `Old keys still in the ring (decrypt-only): ${retired.join(', ')}. Remove with npm run rotate-keys -- --retire <id>.`,
    );
};

/** The rotation, step by step as decideRotation says, each step saved in the key file before the next. */
const rotate = async (run: Run) => {
  if (run.state.rotation === undefined && run.state.backfilledAt === undefined) await backfill(run);
  const started = Date.now();
  for (;;) {
    const { state } = run;
    const step = decideRotation(state.rotation, ringKeyIds(state.encryptionKeys), new Date(), run.settleMs);
    switch (step.kind) {
      case 'add-key': {
        const keyId = nextKeyId(state.encryptionKeys);
        const rotation: RotationState = { phase: 'adding', keyId, since: new Date().toISOString() };
        await save(run, { ...state, encryptionKeys: withKeyAdded(state.encryptionKeys, newKeyEntry(keyId)), rotation });
        say(
          `Added key "${keyId}" to the ring, decrypt-only (active: ${ringKeyIds(run.state.encryptionKeys).activeKeyId}).`,
        );
        break;
      }
      case 'wait':
        say(
          `Waiting ${(step.ms / 1000).toFixed(1)} s for every ${step.reason === 'readers' ? 'reader to have the new key' : 'writer to use the new key'}...`,
        );
        await sleep(step.ms);
        break;
      case 'activate': {
        const rotation: RotationState = { phase: 'reencrypting', keyId: step.keyId, since: new Date().toISOString() };
        await save(run, { ...state, encryptionKeys: withKeyActive(state.encryptionKeys, step.keyId), rotation });
        say(`Key "${step.keyId}" is now active: new values are encrypted under it.`);
        break;
      }
      case 'reencrypt':
        return reencrypt(run, step.keyId, started);
      case 'broken':
        throw new Error(`The key file's rotation state is inconsistent: ${step.reason}. Fix ${run.file} by hand.`);
    }
  }
};

const main = async (): Promise<void> => {
  const file = options['keys-file'] ?? keyFilePath(DATA_DIR);
  const concurrency = Number(options.concurrency);
  const settleMs = Number(options['settle-ms']);
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new Refused('--concurrency must be a whole number above 0');
  if (!Number.isInteger(settleMs) || settleMs < 0) throw new Refused('--settle-ms must be a whole number of ms');
  const { endpoint, table } = await target();
  const db = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint, region: process.env['AWS_REGION'] ?? 'us-east-1', credentials: LOCAL_CREDENTIALS }),
    { marshallOptions: MARSHALL_OPTIONS },
  );
  const run: Run = {
    file,
    concurrency,
    settleMs,
    db,
    table,
    index: new DynamoEncryptionIndex(db, table),
    state: await readKeyFileState(file),
  };
  if (options.backfill) return backfill(run);
  if (options.retire !== undefined) return retire(run, options.retire);
  return rotate(run);
};

if (options.help) say(USAGE);
else
  await main().catch((error: unknown) => {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(error instanceof Refused ? 3 : 1);
  });
