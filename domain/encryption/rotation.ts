// Key rotation: put every encrypted value under the active key, without downtime (docs/decisions.md, "Key rotation").
//
// The steps, each durable before the next (the state lives with the ring: locally the key file, in the cloud the
// operator's parameter and the encryption index):
//   1. adding: the new key is in the ring after the active one, so every reader can decrypt it; wait until every
//      reader has that ring (settleMs locally; a deploy in the cloud) before anything is encrypted under it;
//   2. reencrypting: the new key is active (first); wait settleMs again, so writers that still had the old active key
//      have moved, then run passes over the encryption index until one finds nothing it can rewrite;
//   3. done: the old key stays in the ring (decrypt-only) until it is retired, which the stats must allow.
// The passes are restartable because the index is the progress: a pass reads only entries under other keys.
import type { SecretCipher } from '../identity/ports.js';
import type { Clock } from '../shared/ports.js';
import { encryptedValues } from './fields.js';
import type { EncryptionIndexReader, EncryptionIndexWriter, IndexEntry, Replacement, StoredRecord } from './ports.js';
import { eachLimited } from '../shared/concurrency.js';

/** A rotation in progress, as kept with the ring. */
export type RotationState =
  | { readonly phase: 'adding'; readonly keyId: string; readonly since: string }
  | { readonly phase: 'reencrypting'; readonly keyId: string; readonly since: string };

export type RotationStep =
  /** No rotation in progress: add a new key, decrypt-only. */
  | { readonly kind: 'add-key' }
  /** Let readers (or writers) pick up the ring first. */
  | { readonly kind: 'wait'; readonly ms: number; readonly reason: 'readers' | 'writers' }
  /** Every reader has the new key: make it active. */
  | { readonly kind: 'activate'; readonly keyId: string }
  /** Re-encrypt what is under other keys. */
  | { readonly kind: 'reencrypt'; readonly keyId: string }
  /** The state names a key the ring does not hold (edited by hand): nothing is done. */
  | { readonly kind: 'broken'; readonly reason: string };

/**
 * What a rotation does next, from its durable state, the ring's key ids (active first) and the time. Pure: the
 * caller applies the step, saves the new state, and asks again.
 */
export const decideRotation = (
  state: RotationState | undefined,
  ring: { readonly activeKeyId: string; readonly keyIds: readonly string[] },
  now: Date,
  settleMs: number,
): RotationStep => {
  if (state === undefined) return { kind: 'add-key' };
  if (!ring.keyIds.includes(state.keyId))
    return { kind: 'broken', reason: `the rotation's key "${state.keyId}" is not in the key ring` };
  const left = Date.parse(state.since) + settleMs - now.getTime();
  if (state.phase === 'adding') {
    if (ring.activeKeyId === state.keyId) return { kind: 'broken', reason: `"${state.keyId}" is already active` };
    return left > 0 ? { kind: 'wait', ms: left, reason: 'readers' } : { kind: 'activate', keyId: state.keyId };
  }
  if (ring.activeKeyId !== state.keyId)
    return { kind: 'broken', reason: `the rotation's key "${state.keyId}" is not the active one` };
  return left > 0 ? { kind: 'wait', ms: left, reason: 'writers' } : { kind: 'reencrypt', keyId: state.keyId };
};

/** The key ids an entry needs other than the active one (values under them are to be re-encrypted). */
export const staleKeyIds = (entry: IndexEntry, activeKeyId: string): string[] =>
  Object.entries(entry.values)
    .filter(([id, n]) => n > 0 && id !== activeKeyId)
    .map(([id]) => id);

/**
 * The replacements that put an item's values under the cipher's active key: every value under another key that the
 * ring decrypts. Values it cannot decrypt (unknown format, a key not in the ring, tampered) are counted, not touched.
 */
export const reencrypted = (
  record: StoredRecord,
  cipher: SecretCipher,
  activeKeyId: string,
): { readonly replacements: Replacement[]; readonly undecryptable: number } => {
  const replacements: Replacement[] = [];
  let undecryptable = 0;
  for (const value of encryptedValues(record.recordType, record.item)) {
    if (value.keyId === activeKeyId) continue;
    let plaintext: string;
    try {
      plaintext = cipher.decrypt(value.ciphertext, value.context);
    } catch {
      undecryptable += 1;
      continue;
    }
    replacements.push({
      path: value.path,
      from: value.stored,
      to: value.prefix + cipher.encrypt(plaintext, value.context),
    });
  }
  return { replacements, undecryptable };
};

export interface PassProgress {
  readonly pass: number;
  /** Items handled in this pass, out of the entries found under other keys when the pass started. */
  readonly done: number;
  readonly total: number;
  readonly rewritten: number;
  /** Values re-encrypted per second since the pass started. */
  readonly valuesPerSecond: number;
}

export interface PassReport {
  /** Entries under other keys the pass found. */
  readonly found: number;
  /** Items rewritten, and the values in them. */
  readonly rewritten: number;
  readonly values: number;
  /** Items written by someone else since they were read (the next pass takes them again). */
  readonly conflicts: number;
  /** Items already under the active key when read (the index lagged) or gone. */
  readonly current: number;
  /** Values the ring cannot decrypt: left as they are, and shown by the stats. */
  readonly undecryptable: number;
  /** The pass stopped early (shouldStop): more may be left. */
  readonly stopped: boolean;
}

export interface ReencryptDeps {
  readonly index: EncryptionIndexReader & EncryptionIndexWriter;
  /** The ring's cipher: decrypts with any of its keys, encrypts with the active one. */
  readonly cipher: SecretCipher;
  readonly activeKeyId: string;
  readonly clock: Clock;
}

export interface PassOptions {
  /** Writes in flight at once. */
  readonly concurrency: number;
  /** Items read in one batch (at most 100: one BatchGetItem). */
  readonly batchSize?: number;
  readonly pass?: number;
  readonly onProgress?: (progress: PassProgress) => void;
  /** Asked between batches: true ends the pass there (a time budget). */
  readonly shouldStop?: () => boolean;
}

/**
 * One pass: the index entries under other keys than the active one, their items read (consistently) in batches,
 * each value re-encrypted with the ring and written back conditioned on the ciphertexts read.
 */
export const reencryptPass = async (deps: ReencryptDeps, options: PassOptions): Promise<PassReport> => {
  const stale: IndexEntry[] = [];
  for await (const page of deps.index.entries())
    for (const entry of page) if (staleKeyIds(entry, deps.activeKeyId).length > 0) stale.push(entry);
  const started = deps.clock.now().getTime();
  const batchSize = Math.min(100, options.batchSize ?? 100);
  const counts = { done: 0, rewritten: 0, values: 0, conflicts: 0, current: 0, undecryptable: 0 };
  let stopped = false;
  for (let i = 0; i < stale.length; i += batchSize) {
    if (options.shouldStop?.() === true) {
      stopped = true;
      break;
    }
    const batch = stale.slice(i, i + batchSize);
    const records = await deps.index.records(batch);
    counts.current += batch.length - records.length;
    await eachLimited(records, options.concurrency, async (record) => {
      const { replacements, undecryptable } = reencrypted(record, deps.cipher, deps.activeKeyId);
      counts.undecryptable += undecryptable;
      if (replacements.length === 0) counts.current += undecryptable === 0 ? 1 : 0;
      else if (await deps.index.replace(record, replacements)) {
        counts.rewritten += 1;
        counts.values += replacements.length;
      } else counts.conflicts += 1;
    });
    counts.done += batch.length;
    const seconds = Math.max(0.001, (deps.clock.now().getTime() - started) / 1000);
    options.onProgress?.({
      pass: options.pass ?? 1,
      done: counts.done,
      total: stale.length,
      rewritten: counts.rewritten,
      valuesPerSecond: counts.values / seconds,
    });
  }
  const { rewritten, values, conflicts, current, undecryptable } = counts;
  return { found: stale.length, rewritten, values, conflicts, current, undecryptable, stopped };
};

export interface RotationReport {
  readonly passes: number;
  readonly rewritten: number;
  readonly values: number;
  readonly conflicts: number;
  readonly undecryptable: number;
  /** Nothing the ring can rewrite is left under another key (false: stopped by shouldStop). */
  readonly complete: boolean;
}

/**
 * Passes until one rewrites nothing and meets no concurrent write: then every value the ring can decrypt is under
 * the active key (values it cannot decrypt stay, and the stats show them under their key id).
 */
export const reencryptAll = async (
  deps: ReencryptDeps,
  options: Omit<PassOptions, 'pass'> & { readonly maxPasses?: number },
): Promise<RotationReport> => {
  const total = { passes: 0, rewritten: 0, values: 0, conflicts: 0, undecryptable: 0 };
  for (let pass = 1; pass <= (options.maxPasses ?? 20); pass += 1) {
    const report = await reencryptPass(deps, { ...options, pass });
    total.passes = pass;
    total.rewritten += report.rewritten;
    total.values += report.values;
    total.conflicts += report.conflicts;
    total.undecryptable = report.undecryptable;
    if (report.stopped) return { ...total, complete: false };
    if (report.rewritten === 0 && report.conflicts === 0) return { ...total, complete: true };
  }
  return { ...total, complete: false };
};
