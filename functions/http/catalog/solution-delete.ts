// handler -> deleteSolution (domain/catalog/solutions.ts) -> SolutionRepository, SequenceRepository
import { deleteSolution } from '../../../domain/catalog/solutions.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { PathId } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'delete_solution',
      summary: 'Delete a solution',
      tags: ['catalog'],
      permission: 'solutions:delete',
      params: PathId,
      responses: {
        204: { description: 'Deleted' },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
        409: { description: 'CONFLICT: another record references the solution' },
      },
    },
    async ({ caller, params }) => {
      await deleteSolution(deps(), caller, params.id);
      return { statusCode: 204 };
    },
  );

export const handler = makeHandler(catalogDeps);
