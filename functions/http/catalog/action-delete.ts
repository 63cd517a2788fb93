// handler -> deleteAction (domain/catalog/actions.ts) -> ActionRepository, SequenceRepository
import { deleteAction } from '../../../domain/catalog/actions.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { PathId } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'delete_action',
      summary: 'Delete an action and all its versions',
      tags: ['catalog'],
      permission: 'actions:delete',
      params: PathId,
      responses: {
        204: { description: 'Deleted with all its versions' },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
        409: { description: 'CONFLICT: a sequence uses the action' },
      },
    },
    async ({ caller, params }) => {
      await deleteAction(deps(), caller, params.id);
      return { statusCode: 204 };
    },
  );

export const handler = makeHandler(catalogDeps);
