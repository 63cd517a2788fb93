// The one-time backfill of the encryption index: items written before gsi4 existed hold ciphertexts but no entry, so
// the stats, the verification and the rotation do not see them. One Scan of the whole table finds them (items of a
// registered record type without `gsi4pk`), and each gets its entry through the same registry as every write, with a
// conditional write (idempotent: an item written since has its own entry, and a second run finds nothing).
// Its cost is a read of the whole table (docs/decisions.md, "Key rotation"), so it runs once, before a rotation.
import { encryptedValues } from './fields.js';
import type { EncryptionIndexBackfill } from './ports.js';
import { eachLimited } from '../shared/concurrency.js';

export interface BackfillReport {
  /** Items the scan read, items of registered types found without an entry, entries written. */
  readonly scanned: number;
  readonly found: number;
  readonly indexed: number;
  /** Found items written since they were read (they wrote their own entry). */
  readonly skipped: number;
  /** Where to go on (stopped early by shouldStop); undefined: the scan reached the end of the table. */
  readonly next: string | undefined;
}

export const backfillIndex = async (
  backfill: EncryptionIndexBackfill,
  options: {
    readonly concurrency: number;
    /** Where an earlier, stopped backfill left off. */
    readonly cursor?: string;
    /** Asked between pages: true stops there (a time budget); the report's `next` goes on from there. */
    readonly shouldStop?: () => boolean;
    readonly onPage?: (report: BackfillReport) => void;
  },
): Promise<BackfillReport> => {
  const counts = { scanned: 0, found: 0, indexed: 0, skipped: 0 };
  let next: string | undefined;
  for await (const page of backfill.unindexed(options.cursor)) {
    counts.scanned += page.scanned;
    const records = page.records.filter((r) => encryptedValues(r.recordType, r.item).length > 0);
    counts.found += records.length;
    await eachLimited(records, options.concurrency, async (record) => {
      if (await backfill.addEntry(record)) counts.indexed += 1;
      else counts.skipped += 1;
    });
    next = page.next;
    options.onPage?.({ ...counts, next });
    if (next !== undefined && options.shouldStop?.() === true) break;
  }
  return { ...counts, next };
};
