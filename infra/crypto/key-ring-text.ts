// The key ring as configuration text (`keyId:base64key,keyId:base64key`, the first active: ENCRYPTION_KEYS, the SSM
// parameter, the local key file) and the changes a rotation makes to it. Entries are kept as written; every result
// is checked by parseKeyring, so a change can never produce a ring the service would refuse.
import { randomBytes } from 'node:crypto';
import { keyringInfo, parseKeyring } from './secret-cipher.js';

const entriesOf = (text: string): { id: string; entry: string }[] =>
  text.split(',').map((raw) => {
    const entry = raw.trim();
    return { id: entry.slice(0, Math.max(entry.indexOf(':'), 0)), entry };
  });

const checked = (entries: readonly { entry: string }[]): string => {
  const text = entries.map((e) => e.entry).join(',');
  parseKeyring(text);
  return text;
};

/** The key ids of a ring, the active one first. */
export const ringKeyIds = (text: string) => keyringInfo(parseKeyring(text));

/** A new key entry: 32 random bytes, base64, as ENCRYPTION_KEYS holds them. */
export const newKeyEntry = (keyId: string): string => `${keyId}:${randomBytes(32).toString('base64')}`;

/** A key id not in the ring: the active id's trailing number plus one (`local-1` -> `local-2`), or `<id>-2`. */
export const nextKeyId = (text: string): string => {
  const { activeKeyId, keyIds } = ringKeyIds(text);
  const match = /^(.*?)(\d+)$/.exec(activeKeyId);
  const [stem, first] = match === null ? [`${activeKeyId}-`, 2] : [match[1]!, Number(match[2]) + 1];
  for (let n = first; ; n += 1) if (!keyIds.includes(`${stem}${n}`)) return `${stem}${n}`;
};

/** The ring with `entry` added after the others: it decrypts, the active key still encrypts. */
export const withKeyAdded = (text: string, entry: string): string => checked([...entriesOf(text), { entry }]);

/** The ring with `keyId` moved to the front: it encrypts from now on; the others still decrypt. */
export const withKeyActive = (text: string, keyId: string): string => {
  const entries = entriesOf(text);
  const key = entries.find((e) => e.id === keyId);
  if (key === undefined) throw new Error(`Key "${keyId}" is not in the key ring`);
  return checked([key, ...entries.filter((e) => e !== key)]);
};

/** The ring without `keyId` (never the active key: nothing would encrypt). */
export const withKeyRemoved = (text: string, keyId: string): string => {
  const entries = entriesOf(text);
  if (!entries.some((e) => e.id === keyId)) throw new Error(`Key "${keyId}" is not in the key ring`);
  if (entries[0]!.id === keyId) throw new Error(`Key "${keyId}" is the active key; it cannot be removed`);
  return checked(entries.filter((e) => e.id !== keyId));
};
