// Benchmark (figures printed, nothing asserted): how fast the key rotation re-encrypts, on DynamoDB Local alone (no
// stack, no readers), at a few write concurrencies. Run with `npm run bench:rotation [-- RECORDS]` (default 3000).
// Each round rotates every record to the next key (k1 -> k2 -> ...), so each round rewrites all of them.
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { reencryptAll } from '../../domain/encryption/rotation.js';
import { AesGcmSecretCipher } from '../../infra/crypto/secret-cipher.js';
import { encryptionIndex } from '../../infra/dynamodb/encryption-index.js';
import { DynamoEncryptionIndex } from '../../infra/dynamodb/encryption-store.js';
import { keys } from '../../infra/dynamodb/keys.js';
import { systemClock } from '../../infra/system/clock.js';
import { ensureTables } from '../../local/bootstrap.js';
import { LOCAL_CREDENTIALS, startDynamo } from '../../local/emulators.js';
import { freePort } from '../../local/ports.js';
import { loadServiceDefinition } from '../../local/service-definition.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const RECORDS = Number(process.argv[2] ?? 3000);
const CONCURRENCIES = [1, 8, 16, 32];

const port = await freePort();
const dynamo = await startDynamo({ port });
const client = new DynamoDBClient({
  endpoint: `http://127.0.0.1:${port}`,
  region: 'us-east-1',
  credentials: LOCAL_CREDENTIALS,
});
const db = DynamoDBDocumentClient.from(client);
try {
  const definition = await loadServiceDefinition();
  const table = 'bench-rotation';
  await ensureTables(client, definition.tables, () => table);
  const ring: Record<string, Buffer> = { k1: Buffer.alloc(32, 1) };
  const first = new AesGcmSecretCipher({ activeKeyId: 'k1', keys: ring });
  const items = Array.from({ length: RECORDS }, () => {
    const id = randomUUID();
    const item = { ...keys.trigger(id), type: 'trigger', id, sealedSecret: first.encrypt(`s-${id}`, `trigger:${id}`) };
    return { ...item, ...encryptionIndex('trigger', item) };
  });
  for (let i = 0; i < items.length; i += 25)
    await db.send(
      new BatchWriteCommand({
        RequestItems: { [table]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) },
      }),
    );
  console.log(`key rotation: ${RECORDS} records, ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)}`);
  const index = new DynamoEncryptionIndex(db, table);
  for (const [round, concurrency] of CONCURRENCIES.entries()) {
    const keyId = `k${round + 2}`;
    ring[keyId] = Buffer.alloc(32, round + 2);
    const cipher = new AesGcmSecretCipher({ activeKeyId: keyId, keys: ring });
    const started = Date.now();
    const report = await reencryptAll({ index, cipher, activeKeyId: keyId, clock: systemClock }, { concurrency });
    const seconds = (Date.now() - started) / 1000;
    console.log(
      `   concurrency ${String(concurrency).padStart(2)}: ${report.values} values in ${seconds.toFixed(1)} s, ` +
        `${Math.round(report.values / seconds)} values/s (${report.passes} passes, complete: ${report.complete})`,
    );
  }
} finally {
  db.destroy();
  await dynamo.stop();
}
