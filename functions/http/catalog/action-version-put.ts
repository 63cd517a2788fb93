// handler -> updateVersion (domain/catalog/actions.ts) -> ActionRepository, SequenceRepository
import { updateVersion } from '../../../domain/catalog/actions.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { ActionVersionSchema, VersionPatchBody, VersionPath } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'update_action_version',
      summary: 'Change a version: its script, interpreter, rollback script, timeout, variables, changelog or number',
      tags: ['catalog'],
      permission: 'actions:update',
      params: VersionPath,
      body: VersionPatchBody,
      responses: {
        200: { description: 'The version', schema: ActionVersionSchema },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
        409: { description: 'CONFLICT: the new number exists, or a sequence needs the old one' },
      },
    },
    async ({ caller, params, body }) => ({
      statusCode: 200,
      body: await updateVersion(deps(), caller, params.id, params.version, body),
    }),
  );

export const handler = makeHandler(catalogDeps);
