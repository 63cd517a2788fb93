import { describe, expect, it } from 'vitest';
import { diffViews, stableJson } from '../../../../domain/streams/resource-diff.js';

type View = { id: string; name: string; seen?: string };
const views = (...list: View[]) => new Map(list.map((v) => [v.id, v]));

describe('diffViews', () => {
  it('reports created, updated and deleted ids with the new view, or the last one seen for deleted', () => {
    // Prepare
    const previous = views({ id: 'a', name: 'A' }, { id: 'b', name: 'B' }, { id: 'c', name: 'C' });
    const next = views({ id: 'a', name: 'A' }, { id: 'b', name: 'B2' }, { id: 'd', name: 'D' });
    // Act
    const changes = diffViews(previous, next);
    // Assess
    expect(changes).toEqual([
      { event: 'updated', id: 'b', record: { id: 'b', name: 'B2' } },
      { event: 'created', id: 'd', record: { id: 'd', name: 'D' } },
      { event: 'deleted', id: 'c', record: { id: 'c', name: 'C' } },
    ]);
  });

  it('orders created and updated as the next listing, then deleted as the previous one', () => {
    // Prepare
    const previous = views(
      { id: 'z', name: 'Z' },
      { id: 'm', name: 'M' },
      { id: 'x', name: 'X' },
      { id: 'y', name: 'Y' },
    );
    const next = views({ id: 'n2', name: 'N2' }, { id: 'm', name: 'M2' }, { id: 'n1', name: 'N1' });
    // Act
    const changes = diffViews(previous, next);
    // Assess
    expect(changes.map((c) => `${c.event}:${c.id}`)).toEqual([
      'created:n2',
      'updated:m',
      'created:n1',
      'deleted:z',
      'deleted:x',
      'deleted:y',
    ]);
    expect(diffViews(previous, next)).toEqual(changes);
  });

  it('reports nothing for equal listings, whatever the key order of the views', () => {
    // Prepare
    const previous = new Map([['a', { id: 'a', nested: { x: 1, y: [1, 2] }, name: 'A' }]]);
    const next = new Map([['a', { name: 'A', nested: { y: [1, 2], x: 1 }, id: 'a' }]]);
    // Act / Assess
    expect(diffViews(previous, next)).toEqual([]);
    expect(diffViews(new Map(), new Map())).toEqual([]);
  });

  it('sees a change in an array order or a nested value', () => {
    const previous = new Map([['a', { id: 'a', tags: [{ key: 'k', value: '1' }], list: [1, 2] }]]);
    expect(
      diffViews(previous, new Map([['a', { id: 'a', tags: [{ key: 'k', value: '2' }], list: [1, 2] }]])),
    ).toHaveLength(1);
    expect(
      diffViews(previous, new Map([['a', { id: 'a', tags: [{ key: 'k', value: '1' }], list: [2, 1] }]])),
    ).toHaveLength(1);
  });

  it('compares by the fingerprint given, so a change it leaves out is no update', () => {
    // Prepare
    const previous = views({ id: 'a', name: 'A', seen: '10:00' }, { id: 'b', name: 'B', seen: '10:00' });
    const next = views({ id: 'a', name: 'A', seen: '10:15' }, { id: 'b', name: 'B2', seen: '10:15' });
    const withoutSeen = ({ seen: _seen, ...rest }: View) => stableJson(rest);
    // Act
    const changes = diffViews(previous, next, withoutSeen);
    // Assess: the update carries the whole new view
    expect(changes).toEqual([{ event: 'updated', id: 'b', record: { id: 'b', name: 'B2', seen: '10:15' } }]);
  });
});

describe('stableJson', () => {
  it('sorts object keys at every depth and keeps array order', () => {
    expect(stableJson({ b: 1, a: { d: [3, { f: 1, e: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"e":2,"f":1}]},"b":1}',
    );
  });
});
