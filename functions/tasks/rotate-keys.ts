// invoke (an operator: serverless invoke -f rotateKeys --data '{...}') -> reencryptAll | backfillIndex
// -> the encryption index (docs/cloud.md, "Rotating the data key").
//
// `{}` re-encrypts every value under other keys than the active key of this container's ring (the parameter as read
// at its cold start) until a pass finds nothing or the time budget is spent; `{"action": "backfill"}` indexes items
// written before the index existed (a Scan of the table), `"cursor"` going on where the previous invocation stopped.
// Both are re-invokable: the index is the progress, and every write is conditional. The answer says what is left.
import '../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import * as v from 'valibot';
import { backfillIndex } from '../../domain/encryption/backfill.js';
import { reencryptAll } from '../../domain/encryption/rotation.js';
import { summarize } from '../../domain/encryption/stats.js';
import type { IndexEntry } from '../../domain/encryption/ports.js';
import { logger } from '../shared/logger.js';
import { rotationDeps, type RotationDeps } from '../shared/rotation-wiring.js';

/** Stop starting new work this long before Lambda's limit (a batch of 100 items takes well under a second). */
const MARGIN_MS = 60_000;
const CONCURRENCY = 16;

const Payload = v.strictObject({
  action: v.optional(v.picklist(['reencrypt', 'backfill']), 'reencrypt'),
  cursor: v.optional(v.pipe(v.string(), v.nonEmpty())),
});

interface Context {
  getRemainingTimeInMillis(): number;
}

/** What is still under other keys than the active one, per key id (from the index: nothing is decrypted). */
const left = async (deps: RotationDeps, ring: ReturnType<RotationDeps['ring']>) => {
  const entries: IndexEntry[] = [];
  for await (const page of deps.index.entries()) entries.push(...page);
  const stats = summarize(entries, ring, deps.clock.now());
  return {
    active_key_id: stats.active_key_id,
    left_values: stats.total.retired_values,
    left_records: stats.total.retired_records,
    keys: stats.keys,
    removable_key_ids: stats.removable_key_ids,
  };
};

export const makeHandler = (deps: () => RotationDeps) => async (event: unknown, context: Context) => {
  const payload = v.parse(Payload, event ?? {});
  const shouldStop = () => context.getRemainingTimeInMillis() < MARGIN_MS;
  const d = deps();
  const ring = d.ring();
  if (payload.action === 'backfill') {
    const report = await backfillIndex(d.backfill, {
      concurrency: CONCURRENCY,
      ...(payload.cursor === undefined ? {} : { cursor: payload.cursor }),
      shouldStop,
    });
    logger.info('rotateKeys: backfill', { ...report });
    return { action: 'backfill', ...report, complete: report.next === undefined, next: report.next ?? null };
  }
  let batches = 0;
  const report = await reencryptAll(
    { index: d.index, cipher: ring.cipher, activeKeyId: ring.activeKeyId, clock: d.clock },
    {
      concurrency: CONCURRENCY,
      shouldStop,
      onProgress: (p) => {
        if (++batches % 50 === 0) logger.info('rotateKeys: progress', { ...p });
      },
    },
  );
  const remaining = await left(d, ring);
  logger.info('rotateKeys: re-encrypted', { ...report, left_values: remaining.left_values });
  return { action: 'reencrypt', ...report, ...remaining };
};

export const handler = makeHandler(rotationDeps);
