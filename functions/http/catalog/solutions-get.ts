// handler -> listSolutions (domain/catalog/solutions.ts) -> SolutionRepository
import { listSolutions } from '../../../domain/catalog/solutions.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { CatalogListQuery, Paginated, SolutionSchema } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'list_solutions',
      summary:
        'Solutions the caller may use: its tenant’s and global ones (global callers: all, or one tenant’s view with tenant_id)',
      tags: ['catalog'],
      permission: 'solutions:read',
      query: CatalogListQuery,
      responses: { 200: { description: 'A page of solutions, oldest first', schema: Paginated(SolutionSchema) } },
    },
    async ({ caller, query }) => ({ statusCode: 200, body: await listSolutions(deps(), caller, query) }),
  );

export const handler = makeHandler(catalogDeps);
