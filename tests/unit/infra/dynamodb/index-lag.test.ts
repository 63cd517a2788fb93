// foundDespiteIndexLag (infra/dynamodb/index-lag.ts): a lookup through an eventually consistent index looks again
// before it answers "not found", and only then.
import { describe, expect, it } from 'vitest';
import { foundDespiteIndexLag } from '../../../../infra/dynamodb/index-lag.js';

describe('a lookup through an index', () => {
  it('finds an item the index shows only on the second look, after the first wait', async () => {
    let looks = 0;
    const started = Date.now();
    const found = await foundDespiteIndexLag(async () => (++looks >= 2 ? 'key-1' : undefined), [30, 60]);
    expect([found, looks]).toEqual(['key-1', 2]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });

  it('looks once when the first look finds it, and gives up after the last wait', async () => {
    let looks = 0;
    expect(await foundDespiteIndexLag(async () => (++looks, 'there'), [30, 60])).toBe('there');
    expect(looks).toBe(1);
    let misses = 0;
    expect(await foundDespiteIndexLag(async () => void ++misses, [5, 5])).toBeUndefined();
    expect(misses).toBe(3);
  });
});
