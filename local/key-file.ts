// The local key file (`.local/secrets.json`, 0600): the ring the local stack encrypts with, the rotation in progress
// and when the index backfill last finished. Written by replacing the file (write a temporary file, then rename),
// so a reader (the stack's handlers, infra/crypto/key-ring-source.ts) and a killed rotation never see half of it.
import { randomUUID } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import type { RotationState } from '../domain/encryption/rotation.js';
import { parseKeyring } from '../infra/crypto/secret-cipher.js';

export interface KeyFile {
  /** The ring, `keyId:base64key,...`, the first active (ENCRYPTION_KEYS' format). */
  readonly encryptionKeys: string;
  /** A rotation in progress: a restart resumes it instead of adding another key. */
  readonly rotation?: RotationState;
  /** When a backfill of the encryption index last read the whole table (ISO time). */
  readonly backfilledAt?: string;
}

export const readKeyFileState = async (file: string): Promise<KeyFile> => {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new Error(
      error.code === 'ENOENT'
        ? `No key file at ${file}: start the stack once with its data on disk (npm start, not --in-memory)`
        : `Cannot read the key file ${file}: ${error.message}`,
    );
  });
  const state = JSON.parse(text) as KeyFile;
  if (typeof state.encryptionKeys !== 'string') throw new Error(`${file} holds no encryptionKeys`);
  parseKeyring(state.encryptionKeys);
  return state;
};

export const writeKeyFileState = async (file: string, state: KeyFile): Promise<void> => {
  parseKeyring(state.encryptionKeys); // never write a ring the service would refuse
  const temporary = `${file}.${randomUUID().slice(0, 8)}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
};
