// handler -> encryptionStats (domain/encryption/stats.ts) -> the encryption index (one scan of the sparse gsi4)
import * as v from 'valibot';
import type { EncryptionDeps } from '../../../domain/encryption/ports.js';
import { encryptionStats } from '../../../domain/encryption/stats.js';
import { encryptionDeps } from '../../shared/encryption-wiring.js';
import { http } from '../../shared/http.js';

const Counts = { records: v.number(), values: v.number(), retired_records: v.number(), retired_values: v.number() };
const KeyCount = v.object({
  key_id: v.string(),
  status: v.picklist(['active', 'retired', 'not_in_keyring']),
  records: v.number(),
  values: v.number(),
});

export const EncryptionStatsSchema = v.object({
  active_key_id: v.string(),
  tables: v.array(v.object({ record_type: v.string(), ...Counts, keys: v.array(KeyCount) })),
  keys: v.array(KeyCount),
  total: v.object(Counts),
  removable_key_ids: v.array(v.string()),
  computed_at: v.string(),
});

export const makeHandler = (deps: () => Pick<EncryptionDeps, 'index' | 'keyring' | 'clock'>) =>
  http(
    {
      operationId: 'encryption_stats',
      summary:
        'Encrypted values per record type and key id, those under retired keys, and the active key id (no key material; computed from the encryption index, without decrypting)',
      tags: ['admin'],
      permission: 'encryption:read',
      responses: { 200: { description: 'The encryption statistics of every table', schema: EncryptionStatsSchema } },
    },
    async () => ({ statusCode: 200, body: await encryptionStats(deps()) }),
  );

export const handler = makeHandler(encryptionDeps);
