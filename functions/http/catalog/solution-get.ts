// handler -> getSolution (domain/catalog/solutions.ts) -> SolutionRepository
import { getSolution } from '../../../domain/catalog/solutions.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { PathId, SolutionSchema } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'get_solution',
      summary: 'One solution, by id or short id',
      tags: ['catalog'],
      permission: 'solutions:read',
      params: PathId,
      responses: {
        200: { description: 'The solution', schema: SolutionSchema },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
      },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await getSolution(deps(), caller, params.id) }),
  );

export const handler = makeHandler(catalogDeps);
