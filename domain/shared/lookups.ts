// Read-only lookups one bounded context offers the others (tenancy -> catalog and targets, catalog -> freezes),
// so a use case can check a reference without depending on the other context's repository.

export interface TenantRef {
  readonly id: string;
  readonly shortId: string;
  readonly name: string;
  readonly slug: string;
}

export interface EnvironmentRef {
  readonly id: string;
  readonly shortId: string;
  readonly name: string;
  readonly tenantId: string | null;
}

export interface SolutionRef {
  readonly id: string;
  readonly shortId: string;
  readonly name: string;
  readonly tenantId: string | null;
}

export interface TenantLookup {
  /** By UUID or short id; undefined when missing. */
  findTenant(idOrShortId: string): Promise<TenantRef | undefined>;
}

export interface EnvironmentLookup {
  findEnvironment(idOrShortId: string): Promise<EnvironmentRef | undefined>;
}

export interface SolutionLookup {
  findSolution(idOrShortId: string): Promise<SolutionRef | undefined>;
}
