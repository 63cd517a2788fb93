// handler -> getVersion (domain/catalog/actions.ts) -> ActionRepository
import { getVersion } from '../../../domain/catalog/actions.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { ActionVersionSchema, VersionPath } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'get_action_version',
      summary: 'One version of an action, by its version string',
      tags: ['catalog'],
      permission: 'actions:read',
      params: VersionPath,
      responses: {
        200: { description: 'The version', schema: ActionVersionSchema },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
      },
    },
    async ({ caller, params }) => ({
      statusCode: 200,
      body: await getVersion(deps(), caller, params.id, params.version),
    }),
  );

export const handler = makeHandler(catalogDeps);
