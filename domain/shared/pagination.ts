// Page-number pagination, as the spec's list envelopes use it: `{data, meta}`.

export interface PageRequest {
  readonly page: number; // 1-indexed
  readonly limit: number; // 1..100
}

export interface PageMeta {
  readonly total: number;
  readonly page: number;
  readonly limit: number;
  readonly total_pages: number;
  readonly has_next: boolean;
  readonly has_prev: boolean;
}

export interface Page<T> {
  readonly data: readonly T[];
  readonly meta: PageMeta;
}

export const pageMeta = (total: number, { page, limit }: PageRequest): PageMeta => {
  const totalPages = Math.ceil(total / limit);
  return {
    total,
    page,
    limit,
    total_pages: totalPages,
    has_next: page < totalPages,
    has_prev: page > 1,
  };
};

/** Slices an already ordered, already filtered list into one page. */
export const pageOf = <T>(items: readonly T[], request: PageRequest): Page<T> => {
  const start = (request.page - 1) * request.limit;
  return { data: items.slice(start, start + request.limit), meta: pageMeta(items.length, request) };
};
