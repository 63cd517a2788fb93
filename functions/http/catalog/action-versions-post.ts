// handler -> createVersion (domain/catalog/actions.ts) -> ActionRepository
import { createVersion } from '../../../domain/catalog/actions.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { ActionVersionSchema, NewVersionBody, PathId } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'create_action_version',
      summary: 'Add a version to an action',
      tags: ['catalog'],
      permission: 'actions:create',
      idempotent: true,
      params: PathId,
      body: NewVersionBody,
      responses: {
        201: { description: 'The version', schema: ActionVersionSchema },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
        409: { description: 'CONFLICT: the version exists' },
      },
    },
    async ({ caller, params, body }) => ({
      statusCode: 201,
      body: await createVersion(deps(), caller, params.id, body),
    }),
  );

export const handler = makeHandler(catalogDeps);
