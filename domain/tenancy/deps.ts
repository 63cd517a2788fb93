import type { SolutionLookup } from '../shared/lookups.js';
import type { Clock, IdGenerator } from '../shared/ports.js';
import type { EnvironmentRepository, FreezeRepository, TenantRepository } from './ports.js';

export interface TenancyDeps {
  readonly tenants: TenantRepository;
  readonly environments: EnvironmentRepository;
  readonly freezes: FreezeRepository;
  /** The catalog's solutions, for a freeze's `solution_id`. */
  readonly solutions: SolutionLookup;
  readonly ids: IdGenerator;
  readonly clock: Clock;
}
