import { describe, expect, it } from 'vitest';
import {
  findActionWithVersions,
  isVersionRange,
  isVisibleTo,
  newestFirst,
  normalizeVersion,
  pickVersion,
} from '../../../../domain/catalog/resolve.js';
import { createAction, createVersion } from '../../../../domain/catalog/actions.js';
import { catalogCaller as caller, catalogFakes, TENANT_A } from '../../../fakes/catalog.js';

const versions = ['1.0.0', '1.2.0', '1.10.0', '2.0.0-beta.1', '0.9.0'].map((version) => ({ version }));

describe('pickVersion', () => {
  it('picks the newest version satisfying a range, by semver precedence rather than text', () => {
    expect(pickVersion(versions, '^1.0.0')?.version).toBe('1.10.0');
    expect(pickVersion(versions, '~1.2')?.version).toBe('1.2.0');
    expect(pickVersion(versions, '1.0.0')?.version).toBe('1.0.0');
    expect(pickVersion(versions, '<1')?.version).toBe('0.9.0');
  });

  it('without a requirement picks the latest, pre-releases included (what latest_version shows)', () => {
    expect(pickVersion(versions)?.version).toBe('2.0.0-beta.1');
    expect(pickVersion(versions, null)?.version).toBe('2.0.0-beta.1');
    expect(pickVersion(versions, '  ')?.version).toBe('2.0.0-beta.1');
  });

  it('matches a pre-release only when the range names one (npm rules)', () => {
    expect(pickVersion(versions, '>=2.0.0-0')?.version).toBe('2.0.0-beta.1');
    expect(pickVersion(versions, '^2')).toBeUndefined();
  });

  it('answers undefined when nothing satisfies, or for an invalid range or no versions', () => {
    expect(pickVersion(versions, '^3')).toBeUndefined();
    expect(pickVersion(versions, 'latest')).toBeUndefined();
    expect(pickVersion([], undefined)).toBeUndefined();
  });
});

describe('version helpers', () => {
  it('normalises versions and recognises ranges', () => {
    expect(normalizeVersion(' v1.2.3 ')).toBe('1.2.3');
    expect(normalizeVersion('1.2')).toBeUndefined();
    expect(isVersionRange('^1.2')).toBe(true);
    expect(isVersionRange('')).toBe(false);
    expect(isVersionRange('newest')).toBe(false);
    expect(newestFirst(versions).map((v) => v.version)).toEqual(['2.0.0-beta.1', '1.10.0', '1.2.0', '1.0.0', '0.9.0']);
  });

  it('tells who sees what: global callers everything, tenant callers global records and their own', () => {
    expect(isVisibleTo(null, { tenantId: TENANT_A })).toBe(true);
    expect(isVisibleTo(TENANT_A, { tenantId: null })).toBe(true);
    expect(isVisibleTo(TENANT_A, { tenantId: TENANT_A })).toBe(true);
    expect(isVisibleTo(TENANT_A, { tenantId: 'other' })).toBe(false);
  });
});

describe('findActionWithVersions', () => {
  it('finds an action by id or short id with its versions newest first', async () => {
    // Prepare
    const { deps } = catalogFakes();
    const made = await createAction(deps, caller(), {
      slug: 'restart',
      name: 'Restart',
      version: { version: '1.9.0', script: 'echo a' },
    });
    await createVersion(deps, caller(), made.id, { version: '1.10.0', script: 'echo b' });
    // Act
    const byId = await findActionWithVersions(deps.actions, made.id);
    const byShortId = await findActionWithVersions(deps.actions, made.short_id);
    // Assess
    expect(byId?.versions.map((v) => v.version)).toEqual(['1.10.0', '1.9.0']);
    expect(byShortId?.action.id).toBe(made.id);
    expect(await findActionWithVersions(deps.actions, 'nope')).toBeUndefined();
  });
});
