// handler -> heartbeat (domain/targets/agent-protocol.ts) -> TargetRepository
import * as v from 'valibot';
import { heartbeat } from '../../../domain/targets/agent-protocol.js';
import type { TargetsDeps } from '../../../domain/targets/deps.js';
import { http } from '../../shared/http.js';
import { targetsDeps } from '../../shared/targets-wiring.js';

const Body = v.optional(
  v.object({
    running_command_ids: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(64))), v.maxLength(1000))),
    stopping: v.optional(
      v.pipe(v.boolean(), v.description('true: the agent stops cleanly (its goodbye): the target is offline at once')),
    ),
  }),
);

export const makeHandler = (deps: () => TargetsDeps) =>
  http(
    {
      operationId: 'agent_heartbeat',
      summary: 'The agent is alive (every 15 s busy, 25 s idle); keeps its target online; `stopping` says goodbye',
      tags: ['agent'],
      permission: 'agent',
      body: Body,
      responses: { 200: { description: 'The server time', schema: v.object({ server_time: v.string() }) } },
    },
    async ({ caller, body }) => ({
      statusCode: 200,
      body: await heartbeat(deps(), caller, { stopping: body?.stopping }),
    }),
  );

export const handler = makeHandler(targetsDeps);
