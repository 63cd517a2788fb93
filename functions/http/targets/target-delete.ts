// handler -> deleteTarget (domain/targets/targets.ts) -> TargetRepository
import type { TargetsDeps } from '../../../domain/targets/deps.js';
import { deleteTarget } from '../../../domain/targets/targets.js';
import { http } from '../../shared/http.js';
import { PathId } from '../../shared/schemas.js';
import { targetsDeps } from '../../shared/targets-wiring.js';

export const makeHandler = (deps: () => TargetsDeps) =>
  http(
    {
      operationId: 'delete_target',
      summary: 'Delete a target; its agent token stops working at once',
      tags: ['targets'],
      permission: 'targets:delete',
      params: PathId,
      responses: { 204: { description: 'Deleted' }, 404: { description: 'NOT_FOUND' } },
    },
    async ({ caller, params }) => {
      await deleteTarget(deps(), caller, params.id);
      return { statusCode: 204 };
    },
  );

export const handler = makeHandler(targetsDeps);
