// Records of the tenancy context: tenants, environments and deployment freezes (decisions.md section 5).

export interface Tenant {
  readonly id: string;
  readonly shortId: string;
  readonly name: string;
  /** Unique (case-insensitive), lower-case letters, digits and dashes. */
  readonly slug: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface Environment {
  readonly id: string;
  readonly shortId: string;
  /** Unique (case-insensitive) within its tenant, or among global environments. */
  readonly name: string;
  /** null: a global environment. Fixed at creation. */
  readonly tenantId: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** A window in which deployments matching its scope must not start. Null scope fields match everything. */
export interface Freeze {
  readonly id: string;
  readonly shortId: string;
  readonly name: string;
  readonly reason: string | null;
  /** Normalised UTC ISO 8601 (`Date.prototype.toISOString`), inclusive. */
  readonly startTime: string;
  /** Normalised UTC ISO 8601, exclusive; always after startTime. */
  readonly endTime: string;
  readonly tenantId: string | null;
  readonly solutionId: string | null;
  readonly environmentId: string | null;
  readonly createdBy: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}
