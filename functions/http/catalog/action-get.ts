// handler -> getAction (domain/catalog/actions.ts) -> ActionRepository
import { getAction } from '../../../domain/catalog/actions.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { ActionDetailSchema, PathId } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'get_action',
      summary: 'One action with all its versions, newest first, by id or short id',
      tags: ['catalog'],
      permission: 'actions:read',
      params: PathId,
      responses: {
        200: { description: 'The action', schema: ActionDetailSchema },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
      },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await getAction(deps(), caller, params.id) }),
  );

export const handler = makeHandler(catalogDeps);
