// Lambda entry of the agents' WebSocket API (serverless.yml function `agentSocket`): $connect authenticates the
// agent token and stores the connection, $disconnect clears it, and every message (route `heartbeat`, anything
// else through `$default`) is a heartbeat or answered with an error message. See domain/targets/agent-channel.ts.
// The viewer channel shares the API: a $connect with `?sse_token=` is a viewer's, a $disconnect of a connection
// that is no agent's may be one, and so may a $default message; their code (viewer-socket.ts) is imported only then.
//
// $connect answers 401 to a refused token and 409 to an agent of another major version than the server's (400 to a
// malformed x-deployer-agent-version): the handshake fails; 503 while the configuration is incomplete; the
// other routes always answer 200 to API Gateway (a message cannot be refused with a status: the agent gets an
// `{type: "error"}` message instead).
import '../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import type { APIGatewayProxyResultV2, APIGatewayProxyWebsocketEventV2, Context } from 'aws-lambda';
import * as v from 'valibot';
import {
  connectAgent,
  disconnectAgent,
  socketHeartbeat,
  type ChannelDeps,
} from '../../domain/targets/agent-channel.js';
import type { AgentMessage } from '../../domain/targets/ports.js';
import { InvalidTokenError } from '../../domain/identity/errors.js';
import { agentInstanceOf } from '../../domain/targets/agent-protocol.js';
import { agentVersionOf, IncompatibleAgentError } from '../../domain/targets/compatibility.js';
import { ValidationError } from '../../domain/errors.js';
import { logger } from '../shared/logger.js';
import { channelDeps } from '../shared/agent-socket-wiring.js';
import { serviceMetrics, startupProblems } from '../shared/wiring.js';

type SocketEvent = APIGatewayProxyWebsocketEventV2 & { headers?: Record<string, string | undefined> };

/** The Authorization header, whatever its case (API Gateway keeps the client's; serverless-offline too). */
const authorizationOf = (headers: Record<string, string | undefined> | undefined): string | undefined =>
  Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === 'authorization')?.[1];

const Message = v.variant('action', [
  v.object({
    action: v.literal('heartbeat'),
    running_command_ids: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(64))), v.maxLength(1000))),
    target_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
  }),
]);

type Refusal = { readonly error: Extract<AgentMessage, { type: 'error' }>['error']; readonly close: boolean };

/** One message from an agent: a heartbeat, else the refusal to send back (and whether to close the socket). */
const onMessage = async (
  deps: ChannelDeps,
  connectionId: string,
  body: string | undefined,
): Promise<Refusal | undefined> => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body ?? '');
  } catch {
    return {
      error: { code: 'INVALID_BODY', message: 'Messages are JSON objects: {"action":"heartbeat"}.' },
      close: false,
    };
  }
  const message = v.safeParse(Message, parsed);
  if (!message.success)
    return {
      error: {
        code: 'VALIDATION_ERROR',
        message: 'Unknown message: the only action is "heartbeat" ({"action":"heartbeat"}).',
      },
      close: false,
    };
  if ((await socketHeartbeat(deps, connectionId, message.output.target_id)) === undefined)
    return {
      error: { code: 'INVALID_TOKEN', message: 'This connection is no longer known; connect again.' },
      close: true,
    };
  return undefined;
};

const answer = (statusCode: number): APIGatewayProxyResultV2 => ({ statusCode });

/** The viewer's `$connect` (viewer-socket.ts, loaded only for it): 200, 401, 429, 500, or 503 without the channel. */
const connectViewer = async (token: string, connectionId: string, log: Record<string, unknown>): Promise<number> => {
  const viewer = await import('./viewer-socket.js');
  const deps = viewer.viewerDeps();
  return deps === undefined ? 503 : viewer.viewerConnect(deps, token, connectionId, log);
};

const disconnectViewer = async (connectionId: string): Promise<void> => {
  const viewer = await import('./viewer-socket.js');
  const deps = viewer.viewerDeps();
  if (deps !== undefined) await viewer.viewerDisconnect(deps, connectionId);
};

/** A refused message from a viewer connection: answered as the viewer channel answers; false for an agent's. */
const viewerMessage = async (connectionId: string, body: string | undefined): Promise<boolean> => {
  const viewer = await import('./viewer-socket.js');
  const deps = viewer.viewerDeps();
  return deps !== undefined && viewer.viewerDefault(deps, connectionId, body);
};

export const makeHandler =
  (deps: () => ChannelDeps | undefined, problems: () => readonly string[]) =>
  async (event: SocketEvent, context?: Context): Promise<APIGatewayProxyResultV2> => {
    const { routeKey, connectionId } = event.requestContext;
    const base = { route: routeKey, connectionId, requestId: context?.awsRequestId };
    if (problems().length > 0) {
      logger.error('refusing the agent socket: incomplete configuration', { ...base, problems: problems() });
      return answer(503);
    }
    const channel = deps();
    if (channel === undefined) {
      logger.error('an agent socket event arrived but AGENT_SOCKET_ENDPOINT is not set', base);
      return answer(503);
    }
    try {
      const sseToken = event.queryStringParameters?.['sse_token'];
      if (routeKey === '$connect' && sseToken !== undefined)
        return answer(await connectViewer(sseToken, connectionId, base));
      if (routeKey === '$connect') {
        const agent = await connectAgent(
          channel,
          authorizationOf(event.headers),
          connectionId,
          agentInstanceOf(event.headers),
          agentVersionOf(event.headers),
        );
        logger.info('agent connected', { ...base, targetId: agent.targetId });
        serviceMetrics().agentConnected();
        return answer(200);
      }
      if (routeKey === '$disconnect') {
        const targetId = await disconnectAgent(channel, connectionId);
        if (targetId === undefined) await disconnectViewer(connectionId);
        else logger.info('agent disconnected', { ...base, targetId });
        return answer(200);
      }
      const outcome = await onMessage(channel, connectionId, event.body);
      if (outcome !== undefined && !(await viewerMessage(connectionId, event.body))) {
        logger.info('agent message refused', { ...base, code: outcome.error.code });
        await channel.connections.post(connectionId, { type: 'error', error: outcome.error });
        if (outcome.close) await channel.connections.close(connectionId);
      }
      return answer(200);
    } catch (error) {
      if (error instanceof InvalidTokenError) {
        logger.info('agent connection refused: the token is not valid', base);
        return answer(401);
      }
      // The handshake carries no body to the agent: the status says it, the log says why (the agent learns the
      // versions from the same refusal on GET /api/v1/agent/channel, which it calls before every connection).
      if (error instanceof IncompatibleAgentError) {
        logger.warn('agent connection refused: incompatible agent version', { ...base, ...error.details });
        return answer(409);
      }
      if (error instanceof ValidationError) {
        logger.info('agent connection refused: malformed agent version', { ...base, details: error.details });
        return answer(400);
      }
      logger.error('agent socket event failed', { ...base, error });
      return answer(500);
    }
  };

export const handler = makeHandler(channelDeps, startupProblems);
