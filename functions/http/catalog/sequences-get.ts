// handler -> listSequences (domain/catalog/sequences.ts) -> SequenceRepository
import { listSequences } from '../../../domain/catalog/sequences.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { CatalogListQuery, Paginated, SequenceSchema } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'list_sequences',
      summary:
        'Sequences the caller may use: its tenant’s and global ones (global callers: all, or one tenant’s view with tenant_id)',
      tags: ['catalog'],
      permission: 'sequences:read',
      query: CatalogListQuery,
      responses: { 200: { description: 'A page of sequences, oldest first', schema: Paginated(SequenceSchema) } },
    },
    async ({ caller, query }) => ({ statusCode: 200, body: await listSequences(deps(), caller, query) }),
  );

export const handler = makeHandler(catalogDeps);
