// handler -> updateSolution (domain/catalog/solutions.ts) -> SolutionRepository, SequenceRepository
import { updateSolution } from '../../../domain/catalog/solutions.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { PathId, SolutionSchema, UpdateSolutionBody } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'update_solution',
      summary: 'Change a solution: the given fields replace its own (the tenant is fixed)',
      tags: ['catalog'],
      permission: 'solutions:update',
      params: PathId,
      body: UpdateSolutionBody,
      responses: {
        200: { description: 'The solution', schema: SolutionSchema },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
      },
    },
    async ({ caller, params, body }) => ({
      statusCode: 200,
      body: await updateSolution(deps(), caller, params.id, body),
    }),
  );

export const handler = makeHandler(catalogDeps);
