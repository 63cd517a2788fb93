// handler -> listTargets (domain/targets/targets.ts) -> TargetRepository
import * as v from 'valibot';
import type { TargetsDeps } from '../../../domain/targets/deps.js';
import { listTargets } from '../../../domain/targets/targets.js';
import { http } from '../../shared/http.js';
import { PageQuery, Paginated, Uuid } from '../../shared/schemas.js';
import { targetsDeps } from '../../shared/targets-wiring.js';
import { TagKey, TagSchema, TargetSchema, TargetStatusSchema } from './schemas.js';

/** `tag=env=local,role=web`: a target must carry every pair. */
const TagFilter = v.pipe(
  v.string(),
  v.regex(/^[^=,]+=[^,]*(,[^=,]+=[^,]*)*$/, 'must be key=value pairs separated by commas'),
  v.transform((s) =>
    s.split(',').map((pair) => ({ key: pair.slice(0, pair.indexOf('=')), value: pair.slice(pair.indexOf('=') + 1) })),
  ),
  v.array(v.object({ key: TagKey, value: TagSchema.entries.value })),
);

const Query = v.object({
  ...PageQuery(50).entries,
  status: v.optional(TargetStatusSchema),
  tenant_id: v.optional(Uuid),
  environment_id: v.optional(Uuid),
  tag: v.optional(TagFilter),
  search: v.optional(v.pipe(v.string(), v.maxLength(255))),
});

export const makeHandler = (deps: () => TargetsDeps) =>
  http(
    {
      operationId: 'list_targets',
      summary:
        'Targets, oldest first; filters: status, tenant_id (global callers), environment_id, tag (k=v,...), search',
      tags: ['targets'],
      permission: 'targets:read',
      query: Query,
      responses: { 200: { description: 'A page of targets', schema: Paginated(TargetSchema) } },
    },
    async ({ caller, query }) => ({
      statusCode: 200,
      body: await listTargets(deps(), caller, { ...query, tags: query.tag }),
    }),
  );

export const handler = makeHandler(targetsDeps);
