// Payload paths of deploy triggers: names and array indexes, own properties only.
import { describe, expect, it } from 'vitest';
import { valueAt } from '../../../../domain/triggers/triggers.js';

describe('valueAt', () => {
  const payload = { ref: 'refs/heads/main', release: { tag: 'v1' }, commits: [{ id: 'a1' }, { id: 'b2' }], n: 0 };

  it('follows names and array indexes', () => {
    expect(valueAt(payload, 'ref')).toBe('refs/heads/main');
    expect(valueAt(payload, 'release.tag')).toBe('v1');
    expect(valueAt(payload, 'commits.1.id')).toBe('b2');
    expect(valueAt(payload, 'n')).toBe(0);
  });

  it('answers undefined for what is not there, and never reads inherited properties', () => {
    expect(valueAt(payload, 'release.name')).toBeUndefined();
    expect(valueAt(payload, 'commits.5.id')).toBeUndefined();
    expect(valueAt(payload, 'commits.id')).toBeUndefined();
    expect(valueAt(payload, 'ref.length')).toBeUndefined();
    expect(valueAt(payload, 'constructor')).toBeUndefined();
    expect(valueAt(payload, '__proto__')).toBeUndefined();
    expect(valueAt(null, 'a')).toBeUndefined();
  });
});
