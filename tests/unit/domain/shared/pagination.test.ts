import { describe, expect, it } from 'vitest';
import { pageMeta, pageOf } from '../../../../domain/shared/pagination.js';

describe('pagination', () => {
  it('computes meta for a middle page', () => {
    expect(pageMeta(101, { page: 2, limit: 50 })).toEqual({
      total: 101,
      page: 2,
      limit: 50,
      total_pages: 3,
      has_next: true,
      has_prev: true,
    });
  });

  it('has no pages for no items', () => {
    expect(pageMeta(0, { page: 1, limit: 50 })).toEqual({
      total: 0,
      page: 1,
      limit: 50,
      total_pages: 0,
      has_next: false,
      has_prev: false,
    });
  });

  it('slices one page, and past the end an empty one', () => {
    const items = Array.from({ length: 7 }, (_, i) => i);
    expect(pageOf(items, { page: 3, limit: 3 }).data).toEqual([6]);
    expect(pageOf(items, { page: 4, limit: 3 })).toMatchObject({ data: [], meta: { has_next: false, has_prev: true } });
  });
});
