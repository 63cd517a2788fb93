// Ports of the tenancy context. Adapters: infra/dynamodb/{tenant,environment,freeze}-repository.ts; fakes:
// tests/fakes/tenancy.ts. Writes that break a uniqueness or reference rule throw ConflictError (or, for a
// reference that vanished meanwhile, NotFoundError / ValidationError as documented per method).
import type { EnvironmentLookup, TenantLookup } from '../shared/lookups.js';
import type { Environment, Freeze, Tenant } from './types.js';

export interface TenantRepository extends TenantLookup {
  /** Every tenant, oldest first. */
  listAll(): Promise<readonly Tenant[]>;
  /** By UUID or short id. */
  get(idOrShortId: string): Promise<Tenant | undefined>;
  /** ConflictError (field `slug`) when the slug is taken. */
  create(tenant: Tenant): Promise<void>;
  /** Moves the slug claim when the slug changes. ConflictError when the slug is taken or the tenant changed since read. */
  update(previous: Tenant, next: Tenant): Promise<void>;
  /** ConflictError while anything still references the tenant (environments, freezes); NotFoundError if gone. */
  delete(tenant: Tenant): Promise<void>;
}

export interface EnvironmentRepository extends EnvironmentLookup {
  /** Every environment, oldest first. */
  listAll(): Promise<readonly Environment[]>;
  get(idOrShortId: string): Promise<Environment | undefined>;
  /**
   * Claims the name within the tenant scope and, for a tenant's environment, references the tenant in the same
   * transaction. ConflictError (field `name`) when the name is taken; ValidationError (field `tenant_id`) when
   * the tenant does not exist (any more).
   */
  create(environment: Environment): Promise<void>;
  /** ConflictError when the new name is taken or the environment changed since read. */
  update(previous: Environment, next: Environment): Promise<void>;
  /** Releases the tenant reference. ConflictError while freezes still reference the environment. */
  delete(environment: Environment): Promise<void>;
}

export interface FreezeRepository {
  listAll(): Promise<readonly Freeze[]>;
  /** Freezes whose end is after `at` (a superset of the active ones; the domain applies the exact rule). */
  listEndingAfter(at: Date): Promise<readonly Freeze[]>;
  get(idOrShortId: string): Promise<Freeze | undefined>;
  /**
   * References its tenant and environment (when set) in the same transaction. ValidationError naming
   * `tenant_id` / `environment_id` when one of them does not exist (any more).
   */
  create(freeze: Freeze): Promise<void>;
  /** Moves the references when the scope changes. Same errors as create; ConflictError when changed since read. */
  update(previous: Freeze, next: Freeze): Promise<void>;
  delete(freeze: Freeze): Promise<void>;
}
