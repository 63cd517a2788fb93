// handler -> createAction (domain/catalog/actions.ts) -> ActionRepository, TenantLookup
import { createAction } from '../../../domain/catalog/actions.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { ActionDetailSchema, CreateActionBody } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'create_action',
      summary: 'Create an action with its initial version',
      tags: ['catalog'],
      permission: 'actions:create',
      idempotent: true,
      body: CreateActionBody,
      responses: {
        201: { description: 'The action with its version', schema: ActionDetailSchema },
        409: { description: 'CONFLICT: the slug exists in this scope' },
      },
    },
    async ({ caller, body }) => ({ statusCode: 201, body: await createAction(deps(), caller, body) }),
  );

export const handler = makeHandler(catalogDeps);
