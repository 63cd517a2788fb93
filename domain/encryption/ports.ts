// Ports of encryption at rest. Adapters: infra/dynamodb/encryption-store.ts (the encryption index, the verify slots),
// infra/crypto/secret-cipher.ts (the key ring and single-key ciphers).
import type { Clock } from '../shared/ports.js';
import type { RecordType } from './fields.js';

/** One item of the encryption index: which record, which key ids its ciphertexts need, how many values each. */
export interface IndexEntry {
  readonly recordType: RecordType;
  readonly key: { readonly pk: string; readonly sk: string };
  /** Key id -> how many of the item's values it holds. */
  readonly values: Readonly<Record<string, number>>;
}

/** A stored item that holds ciphertexts, as read from the table. */
export interface StoredRecord {
  readonly recordType: RecordType;
  readonly key: { readonly pk: string; readonly sk: string };
  readonly item: Readonly<Record<string, unknown>>;
}

/** A ciphertext to put in place of another one in an item (rotation). */
export interface Replacement {
  readonly path: readonly string[];
  readonly from: string;
  readonly to: string;
}

export interface EncryptionIndexReader {
  /** Every entry of the encryption index, page by page (a scan of the sparse index: encrypted items only). */
  entries(): AsyncIterable<readonly IndexEntry[]>;
  /** The current items of these entries (read consistently); entries whose item is gone are left out. */
  records(entries: readonly IndexEntry[]): Promise<readonly StoredRecord[]>;
}

export interface EncryptionIndexWriter {
  /**
   * Puts `to` in place of `from` at each path of the record, and its index entry to match, only if every path
   * still holds `from` (a write since the read leaves the item alone): false then.
   */
  replace(record: StoredRecord, replacements: readonly Replacement[]): Promise<boolean>;
}

/** The one-time backfill of the index for items written before it existed (a Scan of the whole table). */
export interface EncryptionIndexBackfill {
  /**
   * Items of registered record types that have no index entry, page by page from `cursor` (the start when absent),
   * with how many items each page read and the cursor of the next page (none after the last).
   */
  unindexed(cursor?: string): AsyncIterable<{
    readonly scanned: number;
    readonly records: readonly StoredRecord[];
    readonly next: string | undefined;
  }>;
  /**
   * Writes the index entry of an item that has none, only if it still has none and its encrypted fields still hold
   * what was read (a write since then wrote its own entry): false then.
   */
  addEntry(record: StoredRecord): Promise<boolean>;
}

/** The key ring in use: its key ids, never its keys. */
export interface KeyringInfo {
  readonly activeKeyId: string;
  readonly keyIds: readonly string[];
}

/** Decrypts with one key only (the key a caller asked to verify). */
export interface SingleKeyDecrypter {
  readonly keyId: string;
  /** Whether `ciphertext` decrypts (authenticates) under `context` with this key; never throws, never returns data. */
  decrypts(ciphertext: string, context: string): boolean;
}

/** One attempt per window per caller: conditional writes, so concurrent attempts cannot both pass. */
export interface VerifySlots {
  /** Takes the caller's slot until `until`; or the time its current slot ends when it is still taken. */
  take(callerId: string, now: Date, until: Date): Promise<{ readonly taken: true } | { readonly takenUntil: Date }>;
}

export interface EncryptionDeps {
  readonly index: EncryptionIndexReader;
  readonly keyring: () => Promise<KeyringInfo>;
  readonly slots: VerifySlots;
  readonly clock: Clock;
}
