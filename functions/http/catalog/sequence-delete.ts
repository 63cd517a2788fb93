// handler -> deleteSequence (domain/catalog/sequences.ts) -> SequenceRepository, ActionRepository
import { deleteSequence } from '../../../domain/catalog/sequences.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { PathId } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'delete_sequence',
      summary: 'Delete a sequence',
      tags: ['catalog'],
      permission: 'sequences:delete',
      params: PathId,
      responses: {
        204: { description: 'Deleted' },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
        409: { description: 'CONFLICT: a solution uses the sequence' },
      },
    },
    async ({ caller, params }) => {
      await deleteSequence(deps(), caller, params.id);
      return { statusCode: 204 };
    },
  );

export const handler = makeHandler(catalogDeps);
