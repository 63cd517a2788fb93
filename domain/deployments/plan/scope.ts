// Step 1 of a plan, tenancy: the deployment's tenant and environment.
import { isVisibleTo } from '../../catalog/resolve.js';
import type { Caller } from '../../identity/types.js';
import type { EnvironmentRef, TenantRef } from '../../shared/lookups.js';
import { tenantForNew } from '../../tenancy/scope.js';
import type { CreateDeploymentCommand, PlanDeps } from './command.js';
import { fail } from './problems.js';

export interface Scope {
  readonly tenant: TenantRef | null;
  readonly environment: EnvironmentRef | null;
}

/**
 * The deployment's tenant and environment. Tenant: as tenancy/scope.ts `tenantForNew` decides (a tenant-scoped
 * caller's own, whether or not it sends tenant_id; a global caller's named tenant, or none). The environment must
 * exist and be visible to the caller, and be global or of the deployment's tenant; a global caller naming a
 * tenant's environment without tenant_id deploys in that tenant.
 */
export const resolveScope = async (
  deps: PlanDeps,
  caller: Caller,
  command: CreateDeploymentCommand,
): Promise<Scope> => {
  let tenantId = await tenantForNew(deps, caller, command.tenant_id, 'deployments');
  let environment: EnvironmentRef | null = null;
  if (command.environment_id !== undefined && command.environment_id !== null) {
    const found = await deps.environments.findEnvironment(command.environment_id);
    environment =
      found !== undefined && isVisibleTo(caller.tenantId, found)
        ? found
        : fail('environment_id', `Environment '${command.environment_id}' does not exist.`);
    if (environment.tenantId !== null) {
      if (tenantId === null) tenantId = environment.tenantId;
      else if (environment.tenantId !== tenantId)
        fail('environment_id', `Environment '${environment.name}' belongs to another tenant than the deployment.`);
    }
  }
  if (tenantId === null) return { tenant: null, environment };
  const tenant: TenantRef =
    (await deps.tenants.findTenant(tenantId)) ??
    fail(command.tenant_id == null ? 'environment_id' : 'tenant_id', `Tenant '${tenantId}' does not exist.`);
  return { tenant, environment };
};
