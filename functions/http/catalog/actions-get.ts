// handler -> listActions (domain/catalog/actions.ts) -> ActionRepository
import { listActions } from '../../../domain/catalog/actions.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { ActionSchema, CatalogListQuery, Paginated } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'list_actions',
      summary:
        'Actions the caller may use: its tenant’s and global ones (global callers: all, or one tenant’s view with tenant_id)',
      tags: ['catalog'],
      permission: 'actions:read',
      query: CatalogListQuery,
      responses: { 200: { description: 'A page of actions, oldest first', schema: Paginated(ActionSchema) } },
    },
    async ({ caller, query }) => ({ statusCode: 200, body: await listActions(deps(), caller, query) }),
  );

export const handler = makeHandler(catalogDeps);
