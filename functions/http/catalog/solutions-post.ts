// handler -> createSolution (domain/catalog/solutions.ts) -> SolutionRepository, SequenceRepository, TenantLookup
import { createSolution } from '../../../domain/catalog/solutions.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { CreateSolutionBody, SolutionSchema } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'create_solution',
      summary: 'Create a solution of sequences (by id or short id; a global solution uses only global sequences)',
      tags: ['catalog'],
      permission: 'solutions:create',
      body: CreateSolutionBody,
      responses: { 201: { description: 'The solution', schema: SolutionSchema } },
    },
    async ({ caller, body }) => ({ statusCode: 201, body: await createSolution(deps(), caller, body) }),
  );

export const handler = makeHandler(catalogDeps);
