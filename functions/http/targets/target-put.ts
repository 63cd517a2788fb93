// handler -> updateTarget (domain/targets/targets.ts) -> TargetRepository
import * as v from 'valibot';
import type { TargetsDeps } from '../../../domain/targets/deps.js';
import { updateTarget } from '../../../domain/targets/targets.js';
import { http } from '../../shared/http.js';
import { Name, PathId } from '../../shared/schemas.js';
import { targetsDeps } from '../../shared/targets-wiring.js';
import { Tags, TargetSchema } from './schemas.js';

const Body = v.object({ name: v.optional(Name), tags: v.optional(Tags) });

export const makeHandler = (deps: () => TargetsDeps) =>
  http(
    {
      operationId: 'update_target',
      summary: 'Rename a target or replace its tags',
      tags: ['targets'],
      permission: 'targets:update',
      params: PathId,
      body: Body,
      responses: {
        200: { description: 'The target', schema: TargetSchema },
        404: { description: 'NOT_FOUND' },
        409: { description: 'CONFLICT: changed meanwhile' },
      },
    },
    async ({ caller, params, body }) => ({
      statusCode: 200,
      body: await updateTarget(deps(), caller, params.id, body),
    }),
  );

export const handler = makeHandler(targetsDeps);
