// handler -> getSequence (domain/catalog/sequences.ts) -> SequenceRepository
import { getSequence } from '../../../domain/catalog/sequences.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { PathId, SequenceSchema } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'get_sequence',
      summary: 'One sequence, by id or short id',
      tags: ['catalog'],
      permission: 'sequences:read',
      params: PathId,
      responses: {
        200: { description: 'The sequence', schema: SequenceSchema },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
      },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await getSequence(deps(), caller, params.id) }),
  );

export const handler = makeHandler(catalogDeps);
