// In-memory fakes of the catalog ports, with the contracts of the DynamoDB adapters: slug claims per scope,
// revision-conditioned version changes, reference counts, and ConcurrentChangeError on a lost race.
import { ConcurrentChangeError } from '../../domain/catalog/errors.js';
import type { CatalogDeps } from '../../domain/catalog/deps.js';
import type {
  ActionRepository,
  ReferenceChange,
  SequenceRepository,
  SolutionRepository,
  VersionChange,
} from '../../domain/catalog/ports.js';
import { newestFirst } from '../../domain/catalog/resolve.js';
import type { Action, ActionVersion, Sequence, Solution } from '../../domain/catalog/types.js';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import type { Caller } from '../../domain/identity/types.js';
import type { TenantLookup, TenantRef } from '../../domain/shared/lookups.js';
import { FakeClock } from './clock.js';
import { fakeIds } from './identity.js';

const byIdOrShortId = <T extends { id: string; shortId: string }>(
  records: Iterable<T>,
  idOrShortId: string,
): T | undefined => [...records].find((r) => r.id === idOrShortId.toLowerCase() || r.shortId === idOrShortId);

export class FakeTenantLookup implements TenantLookup {
  readonly tenants = new Map<string, TenantRef>();
  add(id: string, slug = `tenant-${this.tenants.size + 1}`): TenantRef {
    const tenant = { id, shortId: `t${this.tenants.size + 1}`, name: slug, slug };
    this.tenants.set(id, tenant);
    return tenant;
  }
  async findTenant(idOrShortId: string) {
    return byIdOrShortId(this.tenants.values(), idOrShortId);
  }
}

/** Applies reference changes to records in `store`, all or nothing, like one DynamoDB transaction. */
const applyReferences = <T extends { id: string; revision: number; refCount: number }>(
  store: Map<string, T>,
  changes: readonly ReferenceChange[],
  what: string,
): (() => void) => {
  for (const change of changes) {
    const record = store.get(change.id);
    if (record === undefined || (change.revision !== undefined && record.revision !== change.revision))
      throw new ConcurrentChangeError(what);
  }
  return () => {
    for (const change of changes) {
      const record = store.get(change.id) as T;
      store.set(change.id, {
        ...record,
        refCount: record.refCount + change.delta,
        revision: change.revision === undefined ? record.revision : change.revision + 1,
      });
    }
  };
};

export class FakeActionRepository implements ActionRepository {
  readonly actions = new Map<string, Action>();
  readonly versions = new Map<string, ActionVersion[]>();
  /** Runs once before the next write, to stage a concurrent change (a race). */
  beforeNextWrite: (() => void) | undefined;

  #race(): void {
    const race = this.beforeNextWrite;
    this.beforeNextWrite = undefined;
    race?.();
  }

  async listAll() {
    return [...this.actions.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }
  async find(idOrShortId: string) {
    const action = byIdOrShortId(this.actions.values(), idOrShortId);
    return action && { action, versions: newestFirst(this.versions.get(action.id) ?? []) };
  }
  async create(action: Action, first: ActionVersion) {
    this.#race();
    const clash = [...this.actions.values()].some(
      (a) => a.tenantId === action.tenantId && a.slug.toLowerCase() === action.slug.toLowerCase(),
    );
    if (clash) throw new ConflictError(`slug '${action.slug}' taken`, { field: 'slug' });
    this.actions.set(action.id, action);
    this.versions.set(action.id, [first]);
  }
  async rename(action: Action, change: Pick<Action, 'name' | 'description' | 'updatedAt'>) {
    const current = this.actions.get(action.id);
    if (current === undefined) throw new NotFoundError('Action', action.id);
    const next = { ...current, ...change };
    this.actions.set(action.id, next);
    return next;
  }
  async changeVersions(previous: Action, next: Action, change: VersionChange) {
    this.#race();
    const current = this.actions.get(previous.id);
    if (current === undefined || current.revision !== previous.revision) throw new ConcurrentChangeError('action');
    const versions = this.versions.get(previous.id) ?? [];
    const without = (v: ActionVersion) => versions.filter((x) => x.version !== v.version);
    const after =
      change.kind === 'create'
        ? [...versions, change.version]
        : change.kind === 'delete'
          ? without(change.version)
          : [...without(change.previous), change.next];
    this.versions.set(previous.id, after);
    this.actions.set(previous.id, {
      ...current,
      latestVersion: next.latestVersion,
      versionCount: next.versionCount,
      updatedAt: next.updatedAt,
      revision: next.revision,
    });
  }
  async delete(action: Action) {
    this.#race();
    const current = this.actions.get(action.id);
    if (current === undefined || current.revision !== action.revision || current.refCount !== 0)
      throw new ConcurrentChangeError('action');
    this.actions.delete(action.id);
    this.versions.delete(action.id);
  }
}

export class FakeSequenceRepository implements SequenceRepository {
  readonly sequences = new Map<string, Sequence>();
  constructor(private readonly actions: FakeActionRepository) {}

  async listAll() {
    return [...this.sequences.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }
  async find(idOrShortId: string) {
    return byIdOrShortId(this.sequences.values(), idOrShortId);
  }
  async listUsingAction(actionId: string) {
    return (await this.listAll()).filter((s) => s.steps.some((step) => step.actionId === actionId));
  }
  async create(sequence: Sequence, actions: readonly ReferenceChange[]) {
    const apply = applyReferences(this.actions.actions, actions, 'action');
    this.sequences.set(sequence.id, sequence);
    apply();
  }
  async update(previous: Sequence, next: Sequence, actions: readonly ReferenceChange[]) {
    const current = this.sequences.get(previous.id);
    if (current === undefined || current.revision !== previous.revision) throw new ConcurrentChangeError('sequence');
    const apply = applyReferences(this.actions.actions, actions, 'action');
    this.sequences.set(next.id, { ...next, refCount: current.refCount });
    apply();
  }
  async delete(sequence: Sequence, actions: readonly ReferenceChange[]) {
    const current = this.sequences.get(sequence.id);
    if (current === undefined || current.revision !== sequence.revision || current.refCount !== 0)
      throw new ConcurrentChangeError('sequence');
    const apply = applyReferences(this.actions.actions, actions, 'action');
    this.sequences.delete(sequence.id);
    apply();
  }
}

export class FakeSolutionRepository implements SolutionRepository {
  readonly solutions = new Map<string, Solution>();
  constructor(
    private readonly sequences: FakeSequenceRepository,
    private readonly tenants: FakeTenantLookup,
  ) {}

  async findSolution(idOrShortId: string) {
    const s = await this.find(idOrShortId);
    return s && { id: s.id, shortId: s.shortId, name: s.name, tenantId: s.tenantId };
  }
  async listAll() {
    return [...this.solutions.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }
  async find(idOrShortId: string) {
    return byIdOrShortId(this.solutions.values(), idOrShortId);
  }
  async create(solution: Solution, sequences: readonly ReferenceChange[]) {
    if (solution.tenantId !== null && !this.tenants.tenants.has(solution.tenantId))
      throw ValidationError.field('tenant_id', 'gone');
    const apply = applyReferences(this.sequences.sequences, sequences, 'sequence');
    this.solutions.set(solution.id, solution);
    apply();
  }
  async update(previous: Solution, next: Solution, sequences: readonly ReferenceChange[]) {
    const current = this.solutions.get(previous.id);
    if (current === undefined || current.revision !== previous.revision) throw new ConcurrentChangeError('solution');
    const apply = applyReferences(this.sequences.sequences, sequences, 'sequence');
    this.solutions.set(next.id, { ...next, refCount: current.refCount });
    apply();
  }
  async delete(solution: Solution, sequences: readonly ReferenceChange[]) {
    const current = this.solutions.get(solution.id);
    if (current === undefined || current.revision !== solution.revision || current.refCount !== 0)
      throw new ConcurrentChangeError('solution');
    const apply = applyReferences(this.sequences.sequences, sequences, 'sequence');
    this.solutions.delete(solution.id);
    apply();
  }
}

export const TENANT_A = 'aaaaaaaa-0000-4000-8000-00000000000a';
export const TENANT_B = 'bbbbbbbb-0000-4000-8000-00000000000b';

/** The catalog's deps on fakes, with tenants A and B. */
export const catalogFakes = () => {
  const clock = new FakeClock(new Date('2026-11-22T10:00:00.000Z'));
  const tenants = new FakeTenantLookup();
  tenants.add(TENANT_A, 'tenant-a');
  tenants.add(TENANT_B, 'tenant-b');
  const actions = new FakeActionRepository();
  const sequences = new FakeSequenceRepository(actions);
  const solutions = new FakeSolutionRepository(sequences, tenants);
  const deps: CatalogDeps = { actions, sequences, solutions, tenants, ids: fakeIds(), clock };
  return { deps, clock, tenants, actions, sequences, solutions };
};

/** A caller of the catalog use cases (permissions are the HTTP shell's business, not the use cases'). */
export const catalogCaller = (
  tenantId: string | null = null,
  userId = 'c0000000-0000-4000-8000-000000000001',
): Caller => ({
  kind: 'user',
  userId,
  tenantId,
  roles: [],
  permissions: new Set(),
});
