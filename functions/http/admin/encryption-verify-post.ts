// handler -> verifyKey (domain/encryption/verify.ts) -> verify slots, the encryption index, a one-key decrypter
import * as v from 'valibot';
import type { EncryptionDeps } from '../../../domain/encryption/ports.js';
import { verifyKey } from '../../../domain/encryption/verify.js';
import { parseKeyEntry, singleKeyDecrypter } from '../../../infra/crypto/secret-cipher.js';
import { encryptionDeps } from '../../shared/encryption-wiring.js';
import { http } from '../../shared/http.js';
import { ErrorEnvelopeSchema } from '../../shared/schemas.js';

const KEY_FORMAT = '<key id>:<32 bytes in base64 or base64url>, as one entry of ENCRYPTION_KEYS';

/** A malformed key is refused here, before the hourly slot is taken: it does not count as an attempt. */
const Body = v.object({
  key: v.pipe(
    v.string('must be a string'),
    v.maxLength(200, `must be ${KEY_FORMAT}`),
    // 32 bytes are 43 base64 characters, the last one with its two low bits zero, and an optional '='
    v.regex(/^[A-Za-z0-9_-]{1,64}:[A-Za-z0-9+/_-]{42}[AEIMQUYcgkosw048]=?$/, `must be ${KEY_FORMAT}`),
    v.check((text) => parseKeyEntry(text) !== undefined, `must be ${KEY_FORMAT}`),
  ),
});

const Counts = { checked: v.number(), ok: v.number(), failed: v.number() };
export const KeyVerificationSchema = v.object({
  key_id: v.string(),
  result: v.picklist(['ok', 'failed', 'nothing_to_verify']),
  decrypts_all: v.boolean(),
  in_keyring: v.boolean(),
  ...Counts,
  tables: v.array(v.object({ record_type: v.string(), ...Counts })),
  verified_at: v.string(),
});

export const makeHandler = (deps: () => EncryptionDeps) =>
  http(
    {
      operationId: 'verify_encryption',
      summary: `Whether a key (${KEY_FORMAT}) decrypts every value stored under its key id: counts, never data; one attempt per hour per caller`,
      tags: ['admin'],
      permission: 'encryption:verify',
      body: Body,
      responses: {
        200: { description: 'The counts of values checked, decrypted and not', schema: KeyVerificationSchema },
        400: {
          description: 'VALIDATION_ERROR: the key is not in the documented format (not counted as an attempt)',
          schema: ErrorEnvelopeSchema,
        },
        403: {
          description: 'FORBIDDEN: a tenant-scoped caller (tenant_restriction): the keys seal every tenant’s values',
          schema: ErrorEnvelopeSchema,
        },
        429: {
          description:
            'AUTH_RATE_LIMIT_EXCEEDED (reason too_many_key_verifications): this caller verified a key less than an hour ago',
          schema: ErrorEnvelopeSchema,
        },
      },
    },
    async ({ caller, body }) => {
      const { keyId, key } = parseKeyEntry(body.key)!;
      return { statusCode: 200, body: await verifyKey(deps(), caller, singleKeyDecrypter(keyId, key)) };
    },
  );

export const handler = makeHandler(encryptionDeps);
