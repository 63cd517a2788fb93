// handler -> the build's version, the agent versions it takes and the agent it ships (AGENT_RELEASE). No I/O.
import * as v from 'valibot';
import pkg from '../../../package.json' with { type: 'json' };
import { acceptedAgentVersions } from '../../../domain/targets/compatibility.js';
import { agentRelease } from '../../../infra/config.js';
import { http } from '../../shared/http.js';
import { SERVER_VERSION } from '../../shared/version.js';

export const API_VERSION = '1.0.0';

const ServerInfo = v.object({
  server_version: v.string(),
  api_version: v.string(),
  service: v.string(),
  engine_version: v.pipe(
    v.string(),
    v.description(
      'The orchestration engine’s version: the API and the engine are one deployment of one build, so it equals server_version (api.md: they must match on major.minor)',
    ),
  ),
  agent_versions: v.pipe(
    v.string(),
    v.description(
      'The agent versions this server takes, as a semver range: its own major version (prereleases of it too); other agents are refused with 409 AGENT_VERSION_INCOMPATIBLE',
    ),
  ),
  agent_version: v.pipe(
    v.nullable(v.string()),
    v.description(
      'The version of the agent build this server ships (GET /agent/manifest.json); null when none is known. Agents older than it are marked agent_outdated',
    ),
  ),
});

export const handler = http(
  {
    operationId: 'server_info',
    summary: 'Server, API and engine versions, and the agent versions the server takes',
    tags: ['meta'],
    permission: 'public',
    responses: { 200: { description: 'Versions', schema: ServerInfo } },
  },
  async () => ({
    statusCode: 200,
    body: {
      server_version: SERVER_VERSION,
      api_version: API_VERSION,
      service: pkg.name,
      engine_version: SERVER_VERSION,
      agent_versions: acceptedAgentVersions(SERVER_VERSION),
      agent_version: agentRelease()?.version ?? null,
    } satisfies v.InferOutput<typeof ServerInfo>,
  }),
);
