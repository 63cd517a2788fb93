// handler -> createSequence (domain/catalog/sequences.ts) -> SequenceRepository, ActionRepository, TenantLookup
import { createSequence } from '../../../domain/catalog/sequences.js';
import type { CatalogDeps } from '../../../domain/catalog/deps.js';
import { catalogDeps } from '../../shared/catalog-wiring.js';
import { http } from '../../shared/http.js';
import { CreateSequenceBody, SequenceSchema } from './schemas.js';

export const makeHandler = (deps: () => CatalogDeps) =>
  http(
    {
      operationId: 'create_sequence',
      summary: 'Create a sequence of actions (by id or short id; a global sequence uses only global actions)',
      tags: ['catalog'],
      permission: 'sequences:create',
      body: CreateSequenceBody,
      responses: { 201: { description: 'The sequence', schema: SequenceSchema } },
    },
    async ({ caller, body }) => ({ statusCode: 201, body: await createSequence(deps(), caller, body) }),
  );

export const handler = makeHandler(catalogDeps);
