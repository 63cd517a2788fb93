// The composition root, catalog part: actions, sequences, solutions and the tenant lookup their use cases need.
// The authenticator comes from identity-wiring.ts, passed to the area router (functions/http/catalog/router.ts).
import type { CatalogDeps } from '../../domain/catalog/deps.js';
import { DynamoActionRepository } from '../../infra/dynamodb/action-repository.js';
import { DynamoSequenceRepository } from '../../infra/dynamodb/sequence-repository.js';
import { DynamoSolutionRepository } from '../../infra/dynamodb/solution-repository.js';
import { DynamoTenantRepository } from '../../infra/dynamodb/tenant-repository.js';
import { once } from './once.js';
import { ids, infra } from './wiring.js';

export const catalogDeps = once((): CatalogDeps => {
  const { config: cfg, db, clock } = infra();
  return {
    actions: new DynamoActionRepository(db, cfg.TABLE_NAME),
    sequences: new DynamoSequenceRepository(db, cfg.TABLE_NAME),
    solutions: new DynamoSolutionRepository(db, cfg.TABLE_NAME),
    tenants: new DynamoTenantRepository(db, cfg.TABLE_NAME),
    ids: ids(),
    clock,
  };
});
