// Reusable valibot pieces for request shapes.
import * as v from 'valibot';

/** A query-string integer (query values arrive as strings). */
export const QueryInt = (options: { min: number; max: number; default: number }) =>
  v.optional(
    v.pipe(
      v.string(),
      v.regex(/^-?\d+$/, 'must be an integer'),
      v.transform(Number),
      v.minValue(options.min, `must be at least ${options.min}`),
      v.maxValue(options.max, `must be at most ${options.max}`),
    ),
    String(options.default),
  );

/** page (>= 1, default 1) and limit (1..100) of the spec's paginated lists. */
export const PageQuery = (defaultLimit = 50) =>
  v.object({
    page: QueryInt({ min: 1, max: 1_000_000, default: 1 }),
    limit: QueryInt({ min: 1, max: 100, default: defaultLimit }),
  });

export const Uuid = v.pipe(v.string(), v.uuid('must be a UUID'));

export const ErrorEnvelopeSchema = v.object({
  error: v.object({
    code: v.string(),
    message: v.string(),
    details: v.optional(v.record(v.string(), v.unknown())),
  }),
});
