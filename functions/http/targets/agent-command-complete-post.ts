// handler -> completeCommand (domain/targets/agent-protocol.ts) -> CommandRepository
import * as v from 'valibot';
import { completeCommand } from '../../../domain/targets/agent-protocol.js';
import type { TargetsDeps } from '../../../domain/targets/deps.js';
import { http } from '../../shared/http.js';
import { targetsDeps } from '../../shared/targets-wiring.js';
import { CommandIdParams, OutputChunks } from './schemas.js';

const Time = v.pipe(v.string(), v.isoTimestamp('must be an ISO 8601 date-time'));
const Body = v.object({
  exit_code: v.pipe(v.number(), v.integer('must be an integer'), v.minValue(-1_000_000), v.maxValue(1_000_000)),
  started_at: Time,
  completed_at: Time,
  error_message: v.optional(v.pipe(v.string(), v.maxLength(4000))),
  output: v.optional(OutputChunks),
  sign_of_life: v.optional(v.boolean()),
});

export const makeHandler = (deps: () => TargetsDeps) =>
  http(
    {
      operationId: 'agent_command_complete',
      summary:
        'Ends a command with its exit code (idempotent); its last output may ride along (`output`, the chunks of POST .../output)',
      tags: ['agent'],
      permission: 'agent',
      params: CommandIdParams,
      body: Body,
      responses: {
        200: { description: 'Completed', schema: v.object({ id: v.string(), status: v.literal('completed') }) },
        404: { description: 'NOT_FOUND: no such command for this agent' },
        409: { description: 'CONFLICT: the command was cancelled before delivery or never delivered' },
      },
    },
    async ({ caller, params, body }) => ({
      statusCode: 200,
      body: await completeCommand(deps(), caller, params.id, body),
    }),
  );

export const handler = makeHandler(targetsDeps);
