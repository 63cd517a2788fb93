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

/**
 * The spec's page size: "`limit` is items per page, max 100", "limit 1 to 100", for every list (page/limit and
 * offset/limit alike); beyond it 400 VALIDATION_ERROR. tests/unit/functions/shared/page-limits.test.ts holds every
 * route's `limit` to it and to the spec's defaults.
 */
export const MAX_PAGE_LIMIT = 100;

/** A list's `limit` query parameter: 1..MAX_PAGE_LIMIT, `defaultLimit` when absent. */
export const LimitQuery = (defaultLimit: number) => QueryInt({ min: 1, max: MAX_PAGE_LIMIT, default: defaultLimit });

/** page (>= 1, default 1) and limit (1..100) of the spec's paginated lists. */
export const PageQuery = (defaultLimit = 50) =>
  v.object({
    page: QueryInt({ min: 1, max: 1_000_000, default: 1 }),
    limit: LimitQuery(defaultLimit),
  });

export const Uuid = v.pipe(v.string(), v.uuid('must be a UUID'));

export const ErrorEnvelopeSchema = v.object({
  error: v.object({
    code: v.string(),
    message: v.string(),
    details: v.optional(v.record(v.string(), v.unknown())),
  }),
});

/** A path id: the UUID or the short id. */
export const PathId = v.object({ id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)) });

/** `meta` of every `{data, meta}` list. */
export const MetaSchema = v.object({
  total: v.number(),
  page: v.number(),
  limit: v.number(),
  total_pages: v.number(),
  has_next: v.boolean(),
  has_prev: v.boolean(),
});

/** The `{data, meta}` envelope of a list of `item`. */
export const Paginated = <T extends v.GenericSchema>(item: T) => v.object({ data: v.array(item), meta: MetaSchema });

/** A name: trimmed, 1 to 255 characters (the spec's typical bounds). */
export const Name = v.pipe(
  v.string(),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(255, 'must be at most 255 characters'),
);

/** A slug: lower-case letters, digits and dashes, 1 to 64, starting with a letter or digit. */
export const Slug = v.pipe(
  v.string(),
  v.trim(),
  v.regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'must be 1 to 64 lower-case letters, digits or dashes'),
);
