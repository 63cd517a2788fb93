// handler -> channelInfo (domain/targets/agent-channel.ts) -> TargetRepository (a heartbeat)
import * as v from 'valibot';
import { channelInfo } from '../../../domain/targets/agent-channel.js';
import { MAX_POLL_WAIT_SECONDS } from '../../../domain/targets/agent-protocol.js';
import type { TargetsDeps } from '../../../domain/targets/deps.js';
import { http } from '../../shared/http.js';
import { targetsDeps } from '../../shared/targets-wiring.js';

/** The answer of a service wired without channel settings (the wiring always gives them: the config's defaults). */
const NO_SOCKET = {
  socketUrl: null,
  heartbeatSeconds: 25,
  idlePingSeconds: 25,
  pollWaitSeconds: MAX_POLL_WAIT_SECONDS,
};

export const makeHandler = (deps: () => TargetsDeps) =>
  http(
    {
      operationId: 'agent_channel',
      summary:
        'Where the agent connects its WebSocket (null: none offered, poll) and how often it heartbeats; also a heartbeat',
      tags: ['agent'],
      permission: 'agent',
      responses: {
        200: {
          description: 'The channel settings',
          schema: v.object({
            socket_url: v.nullable(v.string()),
            heartbeat_seconds: v.number(),
            idle_ping_seconds: v.number(),
            poll_wait_seconds: v.number(),
            output_in_completion: v.boolean(),
            release: v.pipe(
              v.nullable(
                v.object({
                  version: v.string(),
                  sha256: v.pipe(v.string(), v.description('Hex SHA-256 of the bundle: check it before running it')),
                  size: v.number(),
                  url: v.pipe(
                    v.string(),
                    v.description(
                      'Where the bundle is served, a path on this server (/agent/v<version>/<16 hex digits of its sha256>/deployer-agent.mjs)',
                    ),
                  ),
                }),
              ),
              v.description(
                'The agent build this server ships; null when none is known. An agent started with --auto-update installs it when it is newer than itself and within `accepted`',
              ),
            ),
            accepted: v.pipe(v.string(), v.description('The agent versions this server takes, as a semver range')),
          }),
        },
      },
    },
    async ({ caller }) => ({
      statusCode: 200,
      body: await channelInfo(deps(), deps().settings.channel ?? NO_SOCKET, caller),
    }),
  );

export const handler = makeHandler(targetsDeps);
