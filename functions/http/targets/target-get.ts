// handler -> getTarget (domain/targets/targets.ts) -> TargetRepository
import type { TargetsDeps } from '../../../domain/targets/deps.js';
import { getTarget } from '../../../domain/targets/targets.js';
import { http } from '../../shared/http.js';
import { PathId } from '../../shared/schemas.js';
import { targetsDeps } from '../../shared/targets-wiring.js';
import { TargetSchema } from './schemas.js';

export const makeHandler = (deps: () => TargetsDeps) =>
  http(
    {
      operationId: 'get_target',
      summary: 'One target, by id or short id, with its status from the last heartbeat',
      tags: ['targets'],
      permission: 'targets:read',
      params: PathId,
      responses: {
        200: { description: 'The target', schema: TargetSchema },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
      },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await getTarget(deps(), caller, params.id) }),
  );

export const handler = makeHandler(targetsDeps);
