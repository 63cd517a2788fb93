// Target tags, pure: matching a selection (all or any) and keeping one value per key. A leaf the targets use cases,
// enrollment and the plan's target selection read.
import type { Tag } from './types.js';

/** Every `key=value` of `wanted` among the target's tags (all = AND) or at least one (any = OR). */
export const matchesTags = (tags: readonly Tag[], wanted: readonly Tag[], all: boolean): boolean => {
  const has = (w: Tag) => tags.some((t) => t.key === w.key && t.value === w.value);
  return all ? wanted.every(has) : wanted.some(has);
};

/** One value per key: the last one given wins. */
export const uniqueTags = (tags: readonly Tag[]): readonly Tag[] => [
  ...new Map(tags.map((t) => [t.key, t] as const)).values(),
];
