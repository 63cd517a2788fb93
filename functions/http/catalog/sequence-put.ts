// handler -> updateSequence (domain/catalog/sequences.ts) -> SequenceRepository, ActionRepository
import { updateSequence } from '../../../domain/catalog/sequences.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { PathId, SequenceSchema, UpdateSequenceBody } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'update_sequence',
      summary: 'Change a sequence: the given fields replace its own (the tenant is fixed)',
      tags: ['catalog'],
      permission: 'sequences:update',
      params: PathId,
      body: UpdateSequenceBody,
      responses: {
        200: { description: 'The sequence', schema: SequenceSchema },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
      },
    },
    async ({ caller, params, body }) => ({
      statusCode: 200,
      body: await updateSequence(deps(), caller, params.id, body),
    }),
  );

export const handler = makeHandler(catalogDeps);
