// The change feed of the resource streams (GET /api/v1/sse/{resource_type}): two listings of a resource's views,
// keyed by id, compared. Pure: no clock, no I/O.

export type ResourceEvent = 'created' | 'updated' | 'deleted';

export interface ResourceChange<V> {
  readonly event: ResourceEvent;
  readonly id: string;
  /** The new view (created, updated) or the last view seen (deleted). */
  readonly record: V;
}

/** JSON with every object's keys sorted, so two equal views give the same text whatever their key order. */
export const stableJson = (value: unknown): string =>
  JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(
          Object.entries(item as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : item,
  );

/**
 * What changed from `previous` to `next`: `created` for an id only in `next`, `updated` for an id in both whose
 * fingerprint differs, `deleted` for an id only in `previous` (with its last view). Created and updated come in
 * `next`'s order, then deleted in `previous`'s order, so the same two listings always give the same changes.
 */
export const diffViews = <V>(
  previous: ReadonlyMap<string, V>,
  next: ReadonlyMap<string, V>,
  fingerprint: (view: V) => string = stableJson,
): ResourceChange<V>[] => {
  const changes: ResourceChange<V>[] = [];
  for (const [id, view] of next) {
    const before = previous.get(id);
    if (before === undefined) changes.push({ event: 'created', id, record: view });
    else if (fingerprint(before) !== fingerprint(view)) changes.push({ event: 'updated', id, record: view });
  }
  for (const [id, view] of previous) {
    if (!next.has(id)) changes.push({ event: 'deleted', id, record: view });
  }
  return changes;
};
