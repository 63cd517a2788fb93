// Local secrets: the keyring that encrypts secrets at rest, made on first start and kept (0600) with the data,
// so a restart can still decrypt what it stored. In memory, a fresh one per run.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export const newKeyring = (): string => `local-1:${randomBytes(32).toString('base64')}`;

/** The key file of a data directory: `{"encryptionKeys": "<ring>", "rotation"?: ...}` (local/key-file.ts). */
export const keyFilePath = (dataDir: string): string => join(dataDir, 'secrets.json');

export const localKeyring = async (dataDir: string | undefined): Promise<string> => {
  if (dataDir === undefined) return newKeyring();
  const file = keyFilePath(dataDir);
  const existing = await readFile(file, 'utf8').then(
    (t) => JSON.parse(t) as { encryptionKeys?: string },
    () => undefined,
  );
  if (existing?.encryptionKeys) return existing.encryptionKeys;
  const encryptionKeys = newKeyring();
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify({ encryptionKeys }, null, 2), { mode: 0o600 });
  return encryptionKeys;
};

/** The bootstrap admin of a local stack (decisions.md section 2): the variables, or the local defaults. */
export const localBootstrapAdmin = () => ({
  email: process.env['BOOTSTRAP_ADMIN_EMAIL'] || 'admin@example.com',
  password: process.env['BOOTSTRAP_ADMIN_PASSWORD'] || 'admin-password',
});
