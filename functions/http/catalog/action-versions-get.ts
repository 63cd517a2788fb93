// handler -> listVersions (domain/catalog/actions.ts) -> ActionRepository
import * as v from 'valibot';
import { listVersions } from '../../../domain/catalog/actions.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { ActionVersionSchema, PathId } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'list_action_versions',
      summary: 'Every version of an action, newest first',
      tags: ['catalog'],
      permission: 'actions:read',
      params: PathId,
      responses: {
        200: { description: 'The versions, newest first by semver', schema: v.array(ActionVersionSchema) },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
      },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await listVersions(deps(), caller, params.id) }),
  );

export const handler = makeHandler(catalogDeps);
