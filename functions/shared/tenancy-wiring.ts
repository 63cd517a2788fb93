// The composition root, tenancy part: tenants, environments, deployment freezes, and the catalog's solutions
// (read only, for a freeze's solution_id).
import type { TenancyDeps } from '../../domain/tenancy/deps.js';
import { DynamoEnvironmentRepository } from '../../infra/dynamodb/environment-repository.js';
import { DynamoFreezeRepository } from '../../infra/dynamodb/freeze-repository.js';
import { DynamoSolutionRepository } from '../../infra/dynamodb/solution-repository.js';
import { DynamoTenantRepository } from '../../infra/dynamodb/tenant-repository.js';
import { once } from './once.js';
import { ids, infra } from './wiring.js';

export const tenancyDeps = once((): TenancyDeps => {
  const { config: cfg, db, clock } = infra();
  return {
    tenants: new DynamoTenantRepository(db, cfg.TABLE_NAME),
    environments: new DynamoEnvironmentRepository(db, cfg.TABLE_NAME),
    freezes: new DynamoFreezeRepository(db, cfg.TABLE_NAME),
    solutions: new DynamoSolutionRepository(db, cfg.TABLE_NAME),
    ids: ids(),
    clock,
  };
});
