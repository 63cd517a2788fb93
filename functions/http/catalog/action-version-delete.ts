// handler -> deleteVersion (domain/catalog/actions.ts) -> ActionRepository, SequenceRepository
import { deleteVersion } from '../../../domain/catalog/actions.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { VersionPath } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'delete_action_version',
      summary: 'Delete a version (never the last one)',
      tags: ['catalog'],
      permission: 'actions:delete',
      params: VersionPath,
      responses: {
        204: { description: 'Deleted' },
        400: { description: 'VALIDATION_ERROR: the last version of the action' },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
        409: { description: 'CONFLICT: a sequence step needs this version' },
      },
    },
    async ({ caller, params }) => {
      await deleteVersion(deps(), caller, params.id, params.version);
      return { statusCode: 204 };
    },
  );

export const handler = makeHandler(catalogDeps);
