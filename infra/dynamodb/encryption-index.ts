// An item's entry in the encryption index (gsi4), derived from the item itself through the registry of encrypted
// fields (domain/encryption/fields.ts): every write of an item that may hold ciphertexts spreads these attributes
// into the same write, so the index always says which key ids the item's current ciphertexts need, whoever wrote
// it last (a process with an older key ring, the rotation, a stale copy written back).
//
// Attributes: gsi4pk / gsi4sk (keys.encrypted) and `encValues` (key id -> how many of the item's values it holds,
// projected into the index). An item without ciphertexts has none of them, so it is not in the index.
import { encryptedValues, valuesByKey, type RecordType } from '../../domain/encryption/fields.js';
import { keys, type Key } from './keys.js';

export interface EncryptionIndexAttributes {
  readonly gsi4pk: string;
  readonly gsi4sk: string;
  readonly encValues: Readonly<Record<string, number>>;
}

/** The index attributes of `item` (which carries its own pk and sk, or `key` gives them); {} without ciphertexts. */
export const encryptionIndex = (
  type: RecordType,
  item: object,
  key: Key = { pk: String((item as Key).pk), sk: String((item as Key).sk) },
): EncryptionIndexAttributes | Record<string, never> => {
  const counts = valuesByKey(encryptedValues(type, item as Readonly<Record<string, unknown>>));
  const keyIds = Object.keys(counts).sort();
  return keyIds.length === 0 ? {} : { ...keys.encrypted(keyIds, type, key), encValues: counts };
};

/**
 * The same for an UpdateItem that rewrites the encrypted fields: a SET of the three attributes, or their REMOVE when
 * the item no longer holds a ciphertext. `item` is the item as it will be (at least its encrypted fields and ids).
 */
export const encryptionIndexUpdate = (
  type: RecordType,
  key: Key,
  item: object,
): { readonly set?: string; readonly remove?: string; readonly values: Record<string, unknown> } => {
  const index = encryptionIndex(type, item, key);
  if (!('gsi4pk' in index)) return { remove: 'gsi4pk, gsi4sk, encValues', values: {} };
  return {
    set: 'gsi4pk = :enc4pk, gsi4sk = :enc4sk, encValues = :encValues',
    values: { ':enc4pk': index.gsi4pk, ':enc4sk': index.gsi4sk, ':encValues': index.encValues },
  };
};
