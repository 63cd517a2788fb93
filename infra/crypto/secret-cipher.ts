// SecretCipher adapter: AES-256-GCM (node:crypto) with a keyring, so keys rotate without re-encrypting at once.
// Format: v1.<key id>.<iv>.<ciphertext>.<tag>, each part base64url; the context is the additional data.
import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import type { SecretCipher } from '../../domain/identity/ports.js';

/** Encrypts with `keys[activeKeyId]`; decrypts with whichever key the ciphertext names. Keys are 32 bytes. */
export interface Keyring {
  readonly activeKeyId: string;
  readonly keys: Readonly<Record<string, Buffer>>;
}

/** Any ciphertext that does not decrypt; the message never says why, nor shows a key or the plaintext. */
export class SecretCipherError extends Error {
  constructor() {
    super('The secret could not be decrypted');
    this.name = 'SecretCipherError';
  }
}

const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KeyId = /^[A-Za-z0-9_-]+$/; // no '.', the format's separator
const Base64Url = /^[A-Za-z0-9_-]*$/;

/** The bytes of a canonical base64url string, or undefined (Buffer.from alone skips characters it cannot read). */
const fromBase64Url = (text: string): Buffer | undefined => {
  if (!Base64Url.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
};

export class AesGcmSecretCipher implements SecretCipher {
  readonly #activeKeyId: string;
  readonly #keys: ReadonlyMap<string, KeyObject>;

  constructor(keyring: Keyring) {
    const keys = new Map<string, KeyObject>();
    for (const [id, key] of Object.entries(keyring.keys)) {
      if (!KeyId.test(id)) throw new Error(`Secret key id "${id}" must be letters, digits, "_" or "-"`);
      if (key.length !== KEY_BYTES) throw new Error(`Secret key "${id}" must be ${KEY_BYTES} bytes`);
      keys.set(id, createSecretKey(Buffer.from(key))); // a copy: later changes to the caller's buffer do not leak in
    }
    if (!keys.has(keyring.activeKeyId))
      throw new Error(`The active secret key "${keyring.activeKeyId}" is not in the keyring`);
    this.#activeKeyId = keyring.activeKeyId;
    this.#keys = keys;
  }

  encrypt(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#keys.get(this.#activeKeyId)!, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, this.#activeKeyId, iv, body, cipher.getAuthTag()]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  decrypt(ciphertext: string, context: string): string {
    const [version, keyId, ivText, bodyText, tagText, ...extra] = ciphertext.split('.');
    if (version !== VERSION || extra.length > 0 || keyId === undefined) throw new SecretCipherError();
    const key = this.#keys.get(keyId);
    const iv = fromBase64Url(ivText ?? '');
    const body = fromBase64Url(bodyText ?? '');
    const tag = fromBase64Url(tagText ?? '');
    if (!key || iv?.length !== IV_BYTES || !body || tag?.length !== TAG_BYTES) throw new SecretCipherError();
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretCipherError(); // authentication failed: tampered, wrong context or wrong key
    }
  }
}

/**
 * A keyring from configuration: `keyId:base64key,keyId2:base64key`, the first entry active. Errors name the
 * entry's key id (or its position when it has none), never the key.
 */
export const parseKeyring = (value: string): Keyring => {
  const keys = new Map<string, Buffer>();
  value.split(',').forEach((entry, index) => {
    const colon = entry.indexOf(':');
    const id = entry.slice(0, Math.max(colon, 0)).trim();
    if (!KeyId.test(id))
      throw new Error(
        `Secret keyring entry ${index + 1} must be keyId:base64key, the id of letters, digits, "_" or "-"`,
      );
    if (keys.has(id)) throw new Error(`Secret key "${id}" appears twice in the keyring`);
    const encoded = entry.slice(colon + 1).trim();
    // base64 or base64url: Buffer reads both alphabets
    const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded) ? Buffer.from(encoded, 'base64') : undefined;
    if (key?.length !== KEY_BYTES) throw new Error(`Secret key "${id}" must be ${KEY_BYTES} bytes, base64-encoded`);
    keys.set(id, key);
  });
  const [activeKeyId] = keys.keys();
  return { activeKeyId: activeKeyId!, keys: Object.fromEntries(keys) };
};

/** The key ids of a keyring, the active one first: what may be shown (never the keys). */
export const keyringInfo = (keyring: Keyring): { activeKeyId: string; keyIds: string[] } => ({
  activeKeyId: keyring.activeKeyId,
  keyIds: [keyring.activeKeyId, ...Object.keys(keyring.keys).filter((id) => id !== keyring.activeKeyId)],
});

/**
 * One key as an admin gives it to the verify endpoint: `<key id>:<key>`, the key 32 bytes in base64 or base64url
 * (padding optional), exactly as one entry of ENCRYPTION_KEYS. Undefined when malformed (the reason is not needed:
 * the endpoint answers one VALIDATION_ERROR).
 */
export const parseKeyEntry = (text: string): { keyId: string; key: Buffer } | undefined => {
  const colon = text.indexOf(':');
  if (colon < 1) return undefined;
  const keyId = text.slice(0, colon);
  const encoded = text.slice(colon + 1);
  if (!KeyId.test(keyId) || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded)) return undefined;
  const key = Buffer.from(encoded, 'base64');
  // Buffer skips what it cannot read: the text must be the canonical encoding of the bytes (either alphabet).
  const canonical = encoded.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  return key.length === KEY_BYTES && key.toString('base64url') === canonical ? { keyId, key } : undefined;
};

/** A decrypter holding one key (the verify endpoint's): answers whether a ciphertext decrypts, never its plaintext. */
export const singleKeyDecrypter = (keyId: string, key: Buffer) => {
  const cipher = new AesGcmSecretCipher({ activeKeyId: keyId, keys: { [keyId]: key } });
  return {
    keyId,
    decrypts: (ciphertext: string, context: string): boolean => {
      try {
        cipher.decrypt(ciphertext, context);
        return true;
      } catch {
        return false;
      }
    },
  };
};
