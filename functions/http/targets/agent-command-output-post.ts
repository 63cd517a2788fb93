// handler -> appendOutput (domain/targets/agent-protocol.ts) -> CommandRepository
import * as v from 'valibot';
import { appendOutput } from '../../../domain/targets/agent-protocol.js';
import type { TargetsDeps } from '../../../domain/targets/deps.js';
import {
  MAX_OUTPUT_BYTES,
  MAX_OUTPUT_CHUNKS,
  MAX_OUTPUT_LINES,
  outputBytes,
  outputLineCount,
} from '../../../domain/targets/output-limits.js';
import { http } from '../../shared/http.js';
import { targetsDeps } from '../../shared/targets-wiring.js';
import { CommandIdParams } from './schemas.js';

export const MAX_CHUNK_CHARS = 65_536;

const Body = v.object({
  chunks: v.pipe(
    v.array(
      v.object({
        stream: v.picklist(['stdout', 'stderr'], 'must be stdout or stderr'),
        data: v.pipe(v.string(), v.maxLength(MAX_CHUNK_CHARS, `must be at most ${MAX_CHUNK_CHARS} characters`)),
        seq: v.pipe(v.number(), v.integer('must be an integer'), v.minValue(0, 'must be at least 0')),
      }),
    ),
    v.minLength(1, 'send at least one chunk'),
    v.maxLength(MAX_OUTPUT_CHUNKS, `at most ${MAX_OUTPUT_CHUNKS} chunks per request`),
    v.check(
      (chunks) => outputBytes(chunks) <= MAX_OUTPUT_BYTES,
      `at most ${MAX_OUTPUT_BYTES} bytes of data per request, all chunks together`,
    ),
    v.check(
      (chunks) => outputLineCount(chunks) <= MAX_OUTPUT_LINES,
      `at most ${MAX_OUTPUT_LINES} lines per request, all chunks together`,
    ),
  ),
});

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
