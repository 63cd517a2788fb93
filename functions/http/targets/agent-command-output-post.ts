// handler -> appendOutput (domain/targets/agent-protocol.ts) -> CommandRepository
import * as v from 'valibot';
import { appendOutput } from '../../../domain/targets/agent-protocol.js';
import type { TargetsDeps } from '../../../domain/targets/deps.js';
import { http } from '../../shared/http.js';
import { targetsDeps } from '../../shared/targets-wiring.js';
import { CommandIdParams, OutputChunks } from './schemas.js';

const Body = v.object({ chunks: OutputChunks });

export const makeHandler = (deps: () => TargetsDeps) =>
  http(
    {
      operationId: 'agent_command_output',
      summary:
        'Appends output of a running command (a retried seq is not stored twice); at most 100 chunks, 1 MiB of data and 5000 lines',
      tags: ['agent'],
      permission: 'agent',
      params: CommandIdParams,
      body: Body,
      responses: {
        200: {
          description: 'Accepted; cancel_requested tells the agent to stop the command',
          schema: v.object({ accepted: v.number(), cancel_requested: v.boolean() }),
        },
        404: { description: 'NOT_FOUND: no such command for this agent' },
        409: { description: 'CONFLICT: the command is not running' },
      },
    },
    async ({ caller, params, body }) => ({
      statusCode: 200,
      body: await appendOutput(deps(), caller, params.id, body.chunks),
    }),
  );

export const handler = makeHandler(targetsDeps);
