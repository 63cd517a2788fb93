// handler -> pollCommands (domain/targets/agent-protocol.ts) -> CommandRepository (long poll)
import * as v from 'valibot';
import { agentInstanceOf, MAX_POLL_WAIT_SECONDS, pollCommands } from '../../../domain/targets/agent-protocol.js';
import type { TargetsDeps } from '../../../domain/targets/deps.js';
import { http } from '../../shared/http.js';
import { QueryInt } from '../../shared/schemas.js';
import { targetsDeps } from '../../shared/targets-wiring.js';

const Query = v.object({
  wait: QueryInt({ min: 0, max: MAX_POLL_WAIT_SECONDS, default: MAX_POLL_WAIT_SECONDS }),
  max: QueryInt({ min: 0, max: 25, default: 4 }),
});

const CommandSchema = v.object({
  id: v.string(),
  deployment_id: v.string(),
  step_id: v.string(),
  attempt: v.number(),
  action: v.object({ id: v.string(), slug: v.string(), version: v.string() }),
  script: v.string(),
  interpreter: v.picklist(['sh', 'bash', 'node', 'python3']),
  variables: v.record(v.string(), v.string()),
  secret_variables: v.array(v.string()),
  timeout_seconds: v.nullable(v.number()),
  created_at: v.string(),
});

export const makeHandler = (deps: () => TargetsDeps) =>
  http(
    {
      operationId: 'agent_poll_commands',
      summary:
        'Long poll: up to `max` commands to run and the ids of running ones to stop; empty after `wait` s. With `x-deployer-agent-instance`, also the commands pushed to that installation and not acknowledged',
      tags: ['agent'],
      permission: 'agent',
      query: Query,
      responses: {
        200: {
          description: 'Work for this agent',
          schema: v.object({ commands: v.array(CommandSchema), cancel: v.array(v.string()) }),
        },
      },
    },
    async ({ caller, query, headers }) => ({
      statusCode: 200,
      body: await pollCommands(deps(), caller, { ...query, instance: agentInstanceOf(headers) }),
    }),
  );

export const handler = makeHandler(targetsDeps);
