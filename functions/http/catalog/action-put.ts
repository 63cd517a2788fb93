// handler -> updateAction (domain/catalog/actions.ts) -> ActionRepository
import { updateAction } from '../../../domain/catalog/actions.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { ActionDetailSchema, PathId, UpdateActionBody } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'update_action',
      summary: 'Change an action’s name or description (slug and tenant are fixed)',
      tags: ['catalog'],
      permission: 'actions:update',
      params: PathId,
      body: UpdateActionBody,
      responses: {
        200: { description: 'The action', schema: ActionDetailSchema },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
      },
    },
    async ({ caller, params, body }) => ({
      statusCode: 200,
      body: await updateAction(deps(), caller, params.id, body),
    }),
  );

export const handler = makeHandler(catalogDeps);
