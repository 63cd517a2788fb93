// The one list of encrypted fields: for each record type that stores ciphertexts (SecretCipher, AES-256-GCM), where
// they sit in the stored item and under which context they were sealed. Every write path of such a record derives
// the record's entry in the encryption index from this list (infra/dynamodb/encryption-index.ts), and the stats,
// the key verification and the rotation read and rewrite exactly the values it finds, so nothing else in the
// service needs to know where ciphertexts live.
//
// Adding an encrypted field or record type (the SSO identity providers' client secret, a webhook secret):
//   1. add its locator to ENCRYPTED_FIELDS below (record type = the item's `type` attribute), with its context;
//   2. spread `encryptionIndex('<type>', item)` into every Put of the item, or `encryptionIndexUpdate(...)` into
//      every UpdateItem that sets the field (infra/dynamodb/encryption-index.ts);
//   3. add a case to tests/unit/domain/encryption/fields.test.ts.
// Nothing else: stats, verify and rotation pick it up from here.
import { API_KEY_CONTEXT } from '../analysis/settings.js';
import { ENCRYPTED_PREFIX, VARIABLE_CONTEXT } from '../shared/variable-secrets.js';
import { twoFactorContext } from '../identity/two-factor.js';

/** One ciphertext in a stored item. */
export interface EncryptedValue {
  /** The attribute path in the stored item (map keys, outermost first). */
  readonly path: readonly string[];
  /** The attribute's value as stored: `prefix` + ciphertext. */
  readonly stored: string;
  readonly prefix: string;
  readonly ciphertext: string;
  /** The SecretCipher context it was sealed with (the additional data). */
  readonly context: string;
  /** The key id the ciphertext names (v1.<key id>.…), or undefined when it is not in the cipher's format. */
  readonly keyId: string | undefined;
}

type StoredItem = Readonly<Record<string, unknown>>;
type Locator = (item: StoredItem) => EncryptedValue[];

/** The SecretCipher context of a signing key's private half. */
export const signingKeyContext = (kid: string): string => `signing-key:${kid}`;

/**
 * The key id a ciphertext names. The format is the SecretCipher's (infra/crypto/secret-cipher.ts):
 * `v1.<key id>.<iv>.<ciphertext>.<tag>`; only the key id is read here, nothing is decrypted.
 */
export const keyIdOf = (ciphertext: string): string | undefined => {
  const parts = ciphertext.split('.');
  return parts.length === 5 && parts[0] === 'v1' && /^[A-Za-z0-9_-]+$/.test(parts[1]!) ? parts[1] : undefined;
};

const asRecord = (value: unknown): StoredItem | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as StoredItem) : undefined;

const valueAt = (path: readonly string[], stored: unknown, context: string, prefix = ''): EncryptedValue[] => {
  if (typeof stored !== 'string' || stored === '') return [];
  const hasPrefix = prefix !== '' && stored.startsWith(prefix);
  const ciphertext = hasPrefix ? stored.slice(prefix.length) : stored;
  return [{ path, stored, prefix: hasPrefix ? prefix : '', ciphertext, context, keyId: keyIdOf(ciphertext) }];
};

/**
 * The secret variables of a deployment or a queued draft (`root` is the item, or the pending request's `draft`):
 * the names the plan flags secret, in the plan, in the variables as given and in the prompted values.
 */
const secretVariables = (root: StoredItem | undefined, base: readonly string[]): EncryptedValue[] => {
  const resolved = asRecord(asRecord(root?.['plan'])?.['resolvedVariables']) ?? {};
  const config = asRecord(root?.['config']);
  const variables = asRecord(config?.['variables']) ?? {};
  const prompted = asRecord(config?.['promptedValues']) ?? {};
  return Object.keys(resolved)
    .filter((name) => asRecord(resolved[name])?.['secret'] === true)
    .sort()
    .flatMap((name) => [
      ...valueAt(
        [...base, 'plan', 'resolvedVariables', name, 'value'],
        asRecord(resolved[name])?.['value'],
        VARIABLE_CONTEXT,
        ENCRYPTED_PREFIX,
      ),
      ...(Object.hasOwn(variables, name)
        ? valueAt([...base, 'config', 'variables', name], variables[name], VARIABLE_CONTEXT, ENCRYPTED_PREFIX)
        : []),
      ...(Object.hasOwn(prompted, name)
        ? valueAt([...base, 'config', 'promptedValues', name], prompted[name], VARIABLE_CONTEXT, ENCRYPTED_PREFIX)
        : []),
    ]);
};

/** Record type (the item's `type` attribute) -> where its ciphertexts are. */
export const ENCRYPTED_FIELDS = {
  /** A user's TOTP secret (domain/identity/two-factor.ts). */
  user: (item) =>
    valueAt(['twoFactor', 'secret'], asRecord(item['twoFactor'])?.['secret'], twoFactorContext(String(item['id']))),
  /** The private half of a token signing key (infra/tokens/jose-token-service.ts). */
  signing_key: (item) => valueAt(['privateKey'], item['privateKey'], signingKeyContext(String(item['kid']))),
  /** Secret deployment variables (domain/shared/variable-secrets.ts sealVariable). */
  deployment: (item) => secretVariables(item, []),
  /** The same, in the draft a pending request waits with. */
  pending_request: (item) => secretVariables(asRecord(item['draft']), ['draft']),
  /** The secret variables a command carries sealed to its agent (domain/deployments/decide.ts). */
  command: (item) => {
    if (item['sealedSecrets'] !== true || !Array.isArray(item['secretVariables'])) return [];
    const variables = asRecord(item['variables']) ?? {};
    return [...new Set(item['secretVariables'].map(String))]
      .sort()
      .filter((name) => Object.hasOwn(variables, name))
      .flatMap((name) => valueAt(['variables', name], variables[name], VARIABLE_CONTEXT, ENCRYPTED_PREFIX));
  },
  /** The failure-analysis provider's API key (domain/analysis/settings.ts). */
  analysis_settings: (item) =>
    valueAt(['overrides', 'provider_api_key'], asRecord(item['overrides'])?.['provider_api_key'], API_KEY_CONTEXT),
  /** An SSO identity provider's client secret (domain/sso/providers.ts). */
  identity_provider: (item) => valueAt(['clientSecret'], item['clientSecret'], `idp:${String(item['id'])}`),
  /** A deploy trigger's signing secret and its saved variables (domain/triggers/triggers.ts). */
  trigger: (item) => [
    ...valueAt(['sealedSecret'], item['sealedSecret'], `trigger:${String(item['id'])}`),
    ...valueAt(
      ['request', 'sealed_values'],
      asRecord(item['request'])?.['sealed_values'],
      `trigger:${String(item['id'])}`,
    ),
  ],
  /** An outgoing webhook subscription's signing secret (domain/webhooks/subscriptions.ts). */
  webhook: (item) => valueAt(['sealedSecret'], item['sealedSecret'], `webhook:${String(item['id'])}`),
} as const satisfies Readonly<Record<string, Locator>>;

export type RecordType = keyof typeof ENCRYPTED_FIELDS;
export const RECORD_TYPES = Object.keys(ENCRYPTED_FIELDS) as RecordType[];

export const isRecordType = (type: unknown): type is RecordType =>
  typeof type === 'string' && Object.hasOwn(ENCRYPTED_FIELDS, type);

/** Every ciphertext of a stored item of `type`, in a stable order. */
export const encryptedValues = (type: RecordType, item: StoredItem): EncryptedValue[] => ENCRYPTED_FIELDS[type](item);

/** Where a value not in the cipher's format is counted: no key decrypts it (a key id never has parentheses). */
export const UNREADABLE = '(unreadable)';

/** How many of an item's values each key id holds (values in no known format count under UNREADABLE). */
export const valuesByKey = (values: readonly EncryptedValue[]): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value.keyId ?? UNREADABLE] = (counts[value.keyId ?? UNREADABLE] ?? 0) + 1;
  return counts;
};
