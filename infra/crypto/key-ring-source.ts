// Where a process gets its key ring, and a cipher that follows it.
//
// In the cloud the ring is ENCRYPTION_KEYS, put in the environment at cold start (infra/secrets.ts): fixed for the
// container's life, so a changed parameter reaches a function at its next cold start. Locally (ENCRYPTION_KEYS_FILE,
// set by local/stack.ts) it is the key file, re-read when it changes: on use, at most once per CHECK_EVERY_MS, a
// stat of the file (its mtime, size and inode: the rotation replaces it by a rename, so a reader never sees half of
// it); a file that does not parse keeps the last good ring. This is what lets `npm run rotate-keys` add a key to
// a running stack's ring, then make it active, each step reaching every handler within a second (the rotation waits
// longer than that between steps). No timer and no watcher: a process that does not decrypt reads nothing.
import { readFileSync, statSync } from 'node:fs';
import type { SecretCipher } from '../../domain/identity/ports.js';
import { AesGcmSecretCipher, parseKeyring } from './secret-cipher.js';

/** How often, at most, a process looks at the key file (the rotation waits several times this between steps). */
export const CHECK_EVERY_MS = 1000;

/** The ring text of a local key file (`{"encryptionKeys": "..."}`), checked; undefined when absent or unreadable. */
export const readKeyFile = (file: string): string | undefined => {
  try {
    const text = (JSON.parse(readFileSync(file, 'utf8')) as { encryptionKeys?: unknown }).encryptionKeys;
    if (typeof text !== 'string') return undefined;
    parseKeyring(text);
    return text;
  } catch {
    return undefined;
  }
};

/**
 * The current ring text: the key file's when `file` is set (re-read when it changed, looked at no more than once per
 * `checkEveryMs`), else `fixed()` (ENCRYPTION_KEYS, for the container's life).
 */
export const keyRingSource = (
  file: string | undefined,
  fixed: () => string,
  options: { readonly checkEveryMs?: number; readonly now?: () => number } = {},
): (() => string) => {
  if (file === undefined) return fixed;
  const every = options.checkEveryMs ?? CHECK_EVERY_MS;
  const now = options.now ?? Date.now;
  let text: string | undefined;
  let seen = '';
  let checkedAt = -Infinity;
  return () => {
    if (now() - checkedAt >= every) {
      checkedAt = now();
      let signature = 'missing';
      try {
        const stat = statSync(file);
        signature = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
      } catch {
        // no file: the fixed ring (or the last one read)
      }
      if (signature !== seen) {
        const read = signature === 'missing' ? undefined : readKeyFile(file);
        if (read !== undefined || signature === 'missing') seen = signature;
        text = read ?? text;
      }
    }
    return text ?? fixed();
  };
};

/** A SecretCipher over the ring `source` gives at each call: the same cipher while the ring text is the same. */
export class KeyRingCipher implements SecretCipher {
  #text: string;
  #cipher: AesGcmSecretCipher;

  constructor(private readonly source: () => string) {
    this.#text = source();
    this.#cipher = new AesGcmSecretCipher(parseKeyring(this.#text)); // a bad ring fails here, when the cipher is made
  }

  get #current(): AesGcmSecretCipher {
    const text = this.source();
    if (text !== this.#text) {
      this.#cipher = new AesGcmSecretCipher(parseKeyring(text));
      this.#text = text;
    }
    return this.#cipher;
  }

  encrypt(plaintext: string, context: string): string {
    return this.#current.encrypt(plaintext, context);
  }

  decrypt(ciphertext: string, context: string): string {
    return this.#current.decrypt(ciphertext, context);
  }
}
