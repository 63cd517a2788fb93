// In-memory fakes of the tenancy ports, with the same contracts as the DynamoDB adapters: slug and name claims,
// reference counts that block deleting a referenced tenant or environment, optimistic updates on updatedAt.
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import type { Permission } from '../../domain/identity/permissions.js';
import { systemRole } from '../../domain/identity/permissions.js';
import type { Caller } from '../../domain/identity/types.js';
import type { SolutionLookup, SolutionRef } from '../../domain/shared/lookups.js';
import type { TenancyDeps } from '../../domain/tenancy/deps.js';
import type { EnvironmentRepository, FreezeRepository, TenantRepository } from '../../domain/tenancy/ports.js';
import type { Environment, Freeze, Tenant } from '../../domain/tenancy/types.js';
import { FakeClock } from './clock.js';
import { fakeIds } from './identity.js';

const byIdOrShortId = <T extends { id: string; shortId: string }>(
  items: Iterable<T>,
  idOrShortId: string,
): T | undefined => [...items].find((item) => item.id === idOrShortId.toLowerCase() || item.shortId === idOrShortId);

/** Reference counts shared by the fakes, as the refCount attributes of tenant and environment items. */
class References {
  readonly counts = new Map<string, number>();
  add(id: string, delta: number): void {
    this.counts.set(id, (this.counts.get(id) ?? 0) + delta);
  }
  of(id: string): number {
    return this.counts.get(id) ?? 0;
  }
}

export class FakeTenantRepository implements TenantRepository {
  readonly tenants = new Map<string, Tenant>();
  constructor(readonly references = new References()) {}

  async findTenant(idOrShortId: string) {
    const tenant = await this.get(idOrShortId);
    return tenant && { id: tenant.id, shortId: tenant.shortId, name: tenant.name, slug: tenant.slug };
  }
  async listAll() {
    return [...this.tenants.values()];
  }
  async get(idOrShortId: string) {
    return byIdOrShortId(this.tenants.values(), idOrShortId);
  }
  #slugTaken(slug: string, except?: string) {
    return [...this.tenants.values()].some((t) => t.id !== except && t.slug.toLowerCase() === slug.toLowerCase());
  }
  async create(tenant: Tenant) {
    if (this.#slugTaken(tenant.slug)) throw new ConflictError('slug taken', { field: 'slug' });
    this.tenants.set(tenant.id, tenant);
  }
  async update(previous: Tenant, next: Tenant) {
    if (this.#slugTaken(next.slug, next.id)) throw new ConflictError('slug taken', { field: 'slug' });
    if (this.tenants.get(previous.id)?.updatedAt !== previous.updatedAt) throw new ConflictError('changed meanwhile');
    this.tenants.set(next.id, next);
  }
  async delete(tenant: Tenant) {
    if (!this.tenants.has(tenant.id)) throw new NotFoundError('Tenant', tenant.id);
    if (this.references.of(tenant.id) > 0)
      throw new ConflictError('still referenced', { references: this.references.of(tenant.id) });
    this.tenants.delete(tenant.id);
  }
}

export class FakeEnvironmentRepository implements EnvironmentRepository {
  readonly environments = new Map<string, Environment>();
  constructor(
    private readonly tenants: FakeTenantRepository,
    readonly references = tenants.references,
  ) {}

  async findEnvironment(idOrShortId: string) {
    const environment = await this.get(idOrShortId);
    return (
      environment && {
        id: environment.id,
        shortId: environment.shortId,
        name: environment.name,
        tenantId: environment.tenantId,
      }
    );
  }
  async listAll() {
    return [...this.environments.values()];
  }
  async get(idOrShortId: string) {
    return byIdOrShortId(this.environments.values(), idOrShortId);
  }
  #nameTaken(environment: Environment) {
    return [...this.environments.values()].some(
      (e) =>
        e.id !== environment.id &&
        e.tenantId === environment.tenantId &&
        e.name.toLowerCase() === environment.name.toLowerCase(),
    );
  }
  async create(environment: Environment) {
    if (this.#nameTaken(environment)) throw new ConflictError('name taken', { field: 'name' });
    if (environment.tenantId !== null) {
      if (!this.tenants.tenants.has(environment.tenantId)) throw ValidationError.field('tenant_id', 'no such tenant');
      this.references.add(environment.tenantId, 1);
    }
    this.environments.set(environment.id, environment);
  }
  async update(previous: Environment, next: Environment) {
    if (this.#nameTaken(next)) throw new ConflictError('name taken', { field: 'name' });
    if (this.environments.get(previous.id)?.updatedAt !== previous.updatedAt)
      throw new ConflictError('changed meanwhile');
    this.environments.set(next.id, next);
  }
  async delete(environment: Environment) {
    if (!this.environments.has(environment.id)) throw new NotFoundError('Environment', environment.id);
    if (this.references.of(environment.id) > 0) throw new ConflictError('still referenced');
    if (environment.tenantId !== null) this.references.add(environment.tenantId, -1);
    this.environments.delete(environment.id);
  }
}

export class FakeFreezeRepository implements FreezeRepository {
  readonly freezes = new Map<string, Freeze>();
  constructor(
    private readonly tenants: FakeTenantRepository,
    private readonly environments: FakeEnvironmentRepository,
    readonly references = tenants.references,
  ) {}

  async listAll() {
    return [...this.freezes.values()];
  }
  async listEndingAfter(at: Date) {
    return [...this.freezes.values()].filter((f) => f.endTime > at.toISOString());
  }
  async get(idOrShortId: string) {
    return byIdOrShortId(this.freezes.values(), idOrShortId);
  }
  #reference(before: Freeze | null, after: Freeze | null) {
    if (after?.tenantId != null && after.tenantId !== before?.tenantId && !this.tenants.tenants.has(after.tenantId))
      throw ValidationError.field('tenant_id', 'no such tenant');
    if (
      after?.environmentId != null &&
      after.environmentId !== before?.environmentId &&
      !this.environments.environments.has(after.environmentId)
    ) {
      throw ValidationError.field('environment_id', 'no such environment');
    }
    for (const field of ['tenantId', 'environmentId'] as const) {
      const old = before?.[field] ?? null;
      const now = after?.[field] ?? null;
      if (old === now) continue;
      if (old !== null) this.references.add(old, -1);
      if (now !== null) this.references.add(now, 1);
    }
  }
  async create(freeze: Freeze) {
    this.#reference(null, freeze);
    this.freezes.set(freeze.id, freeze);
  }
  async update(previous: Freeze, next: Freeze) {
    if (this.freezes.get(previous.id)?.updatedAt !== previous.updatedAt) throw new ConflictError('changed meanwhile');
    this.#reference(previous, next);
    this.freezes.set(next.id, next);
  }
  async delete(freeze: Freeze) {
    if (!this.freezes.has(freeze.id)) throw new NotFoundError('Deployment freeze', freeze.id);
    this.#reference(freeze, null);
    this.freezes.delete(freeze.id);
  }
}

/** The catalog's solutions as the tenancy context sees them. */
export class FakeSolutionLookup implements SolutionLookup {
  readonly solutions = new Map<string, SolutionRef>();
  add(solution: SolutionRef): SolutionRef {
    this.solutions.set(solution.id, solution);
    return solution;
  }
  async findSolution(idOrShortId: string) {
    return byIdOrShortId(this.solutions.values(), idOrShortId);
  }
}

export const tenancyFakes = () => {
  const clock = new FakeClock(new Date('2026-11-22T10:00:00.000Z'));
  const tenants = new FakeTenantRepository();
  const environments = new FakeEnvironmentRepository(tenants);
  const freezes = new FakeFreezeRepository(tenants, environments);
  const solutions = new FakeSolutionLookup();
  const deps: TenancyDeps = { tenants, environments, freezes, solutions, ids: fakeIds(), clock };
  return { deps, clock, tenants, environments, freezes, solutions, references: tenants.references };
};

/** A caller holding one system role's permissions, global (tenantId null) or in one tenant. */
export const callerWith = (role: string, tenantId: string | null = null, userId = 'caller'): Caller => ({
  kind: 'user',
  userId,
  tenantId,
  roles: [role],
  permissions: new Set<Permission>(systemRole(role)?.permissions ?? []),
});

export const aFreeze = (overrides: Partial<Freeze> = {}): Freeze => ({
  id: 'f7000000-0000-4000-8000-000000000001',
  shortId: 'fz1',
  name: 'Freeze',
  reason: null,
  startTime: '2026-12-01T00:00:00.000Z',
  endTime: '2026-12-02T00:00:00.000Z',
  tenantId: null,
  solutionId: null,
  environmentId: null,
  createdBy: 'someone',
  createdAt: '2026-11-01T00:00:00.000Z',
  updatedAt: '2026-11-01T00:00:00.000Z',
  ...overrides,
});
