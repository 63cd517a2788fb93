// handler -> registerAgent (domain/targets/enrollment.ts) -> EnrollmentTokenRepository, TargetRepository
import * as v from 'valibot';
import type { TargetsDeps } from '../../../domain/targets/deps.js';
import { agentVersionOf } from '../../../domain/targets/compatibility.js';
import { registerAgent } from '../../../domain/targets/enrollment.js';
import { http } from '../../shared/http.js';
import { Name } from '../../shared/schemas.js';
import { targetsDeps } from '../../shared/targets-wiring.js';
import { HostField, Tags } from './schemas.js';

const Body = v.object({
  enrollment_token: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(200)),
  name: Name,
  hostname: HostField,
  os: HostField,
  arch: HostField,
  agent_version: v.pipe(HostField, v.maxLength(64)),
  /** Ignored: the target gets its enrollment token's tags (the answer's `tags`). */
  tags: v.optional(Tags, []),
});

const Registered = v.object({
  target_id: v.string(),
  short_id: v.string(),
  agent_token: v.string(),
  /** The tags the target got: its enrollment token's (the agent's own `tags` are not applied). */
  tags: v.array(v.object({ key: v.string(), value: v.string() })),
});

export const makeHandler = (deps: () => TargetsDeps) =>
  http(
    {
      operationId: 'agent_register',
      summary: 'An agent enrolls its host with an enrollment token; the agent token is shown once',
      tags: ['agent'],
      permission: 'public',
      body: Body,
      responses: {
        201: {
          description: "The new target, the tags it got (its enrollment token's) and its agent token",
          schema: Registered,
        },
        400: { description: 'VALIDATION_ERROR: also an agent_version that is not a semantic version' },
        401: { description: 'INVALID_CREDENTIALS: unknown, expired, revoked or used-up enrollment token' },
        409: {
          description:
            'AGENT_VERSION_INCOMPATIBLE: agent_version is of another major version than the server’s (GET /api/v1/server/info, agent_versions); details {agent_version, accepted, server_version}; the token keeps its uses',
        },
      },
    },
    async ({ body, headers }) => ({
      statusCode: 201,
      body: await registerAgent(deps(), body, agentVersionOf(headers)),
    }),
  );

export const handler = makeHandler(targetsDeps);
