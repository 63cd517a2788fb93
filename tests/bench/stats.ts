// The benchmarks' one way to read a sample: the p-th percentile of sorted values (nearest rank, the value at or
// above p % of the samples), NaN for no samples.

/** The p-th percentile (0-100) of `sorted` (ascending); NaN when empty. */
export const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
