// handler -> subscribeViewer / unsubscribeViewer / pingViewer -> ViewerRegistry, DeploymentEventStore
//
// Lambda entry of the viewer channel's messages on the agents' WebSocket API (serverless.yml function
// `viewerSocket`, routes `subscribe`, `unsubscribe`, `ping`; domain/streams/viewer-channel.ts). A message cannot be
// refused with a status: every refusal is an `error` message in the API's envelope (with the message's `ref`), and
// the connection stays open. Also the viewer side of the agents' function (agent-socket.ts imports it lazily): the
// `$connect` with `?sse_token=` (401, 429 or 503 refuse the handshake), `$disconnect`, and the error answer to a
// message API Gateway routed to `$default` (not JSON, or an unknown action).
import '../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import type { APIGatewayProxyResultV2, APIGatewayProxyWebsocketEventV2, Context } from 'aws-lambda';
import * as v from 'valibot';
import { DomainError } from '../../domain/errors.js';
import { InvalidTokenError } from '../../domain/identity/errors.js';
import { RESOURCE_TYPES } from '../../domain/streams/resource-sources.js';
import {
  connectViewer,
  disconnectViewer,
  pingViewer,
  unsubscribeViewer,
  type TopicRequest,
  type ViewerChannelDeps,
  type ViewerSubscribeDeps,
} from '../../domain/streams/viewer-channel.js';
import type { ViewerMessage } from '../../domain/streams/viewer-ports.js';
import { subscribeViewer } from '../../domain/streams/viewer-subscribe.js';
import { renderError } from '../shared/errors.js';
import { logger } from '../shared/logger.js';
import { viewerChannelDeps } from '../shared/viewer-wiring.js';
import { startupProblems } from '../shared/wiring.js';

const Ref = v.optional(v.pipe(v.string(), v.maxLength(128)));
const Action = v.picklist(['subscribe', 'unsubscribe']);
const DeploymentTopic = v.object({
  action: Action,
  ref: Ref,
  topic: v.literal('deployment'),
  deployment_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  last_event_id: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(9_999_999_999)), 0),
});
const ResourcesTopic = v.object({
  action: Action,
  ref: Ref,
  topic: v.literal('resources'),
  resource_type: v.picklist(RESOURCE_TYPES),
  tenant_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
  snapshot: v.optional(v.boolean(), false),
});
const Ping = v.object({ action: v.literal('ping'), ref: Ref });
const Message = v.variant('action', [Ping, v.variant('topic', [DeploymentTopic, ResourcesTopic])]);
type Message = v.InferOutput<typeof Message>;

const USAGE =
  'Messages are JSON objects: {"action":"subscribe","topic":"deployment","deployment_id":"...","last_event_id":0}, ' +
  '{"action":"subscribe","topic":"resources","resource_type":"deployments"}, the same with "unsubscribe", or {"action":"ping"}.';

/** The `ref` of a message, when it has one (echoed even in the refusal of a malformed message). */
const refOf = (parsed: unknown): string | undefined => {
  const ref = (parsed as { ref?: unknown } | null)?.ref;
  return typeof ref === 'string' && ref.length <= 128 ? ref : undefined;
};

/** The body parsed, or the VALIDATION_ERROR to answer (with the issues' paths). */
const parse = (body: string | undefined): { message: Message } | { refusal: ViewerMessage } => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body ?? '');
  } catch {
    return { refusal: refusal(undefined, 'VALIDATION_ERROR', `Not JSON. ${USAGE}`) };
  }
  const result = v.safeParse(Message, parsed);
  if (result.success) return { message: result.output };
  const fields = result.issues.map((issue) => ({
    field: v.getDotPath(issue) ?? '',
    code: 'VALIDATION_ERROR',
    message: issue.message,
  }));
  return { refusal: refusal(refOf(parsed), 'VALIDATION_ERROR', `Unknown or malformed message. ${USAGE}`, { fields }) };
};

const refusal = (
  ref: string | undefined,
  code: string,
  message: string,
  details: Readonly<Record<string, unknown>> = {},
): ViewerMessage => ({ type: 'error', ...(ref === undefined ? {} : { ref }), error: { code, message, details } });

/** A thrown error as the `error` message (the API's envelope: below 500 as is, else generic and logged). */
const errorMessage = (error: unknown, ref: string | undefined, requestId: string): ViewerMessage => {
  const { error: rendered } = renderError(error, requestId).body;
  return refusal(ref, rendered.code, rendered.message, rendered.details ?? {});
};

const topicRequest = (message: Exclude<Message, { action: 'ping' }>): TopicRequest =>
  message.topic === 'deployment'
    ? { topic: 'deployment', deploymentId: message.deployment_id, lastEventId: message.last_event_id }
    : {
        topic: 'resources',
        resourceType: message.resource_type,
        tenantId: message.tenant_id,
        snapshot: message.snapshot,
      };

/** The topic's fields as sent, for `subscribed` / `unsubscribed`. */
const echoOf = (message: Exclude<Message, { action: 'ping' }>) => {
  const { action: _action, ref, ...topic } = message;
  return { ...(ref === undefined ? {} : { ref }), topic };
};

const onMessage = async (deps: ViewerSubscribeDeps, connectionId: string, message: Message): Promise<void> => {
  if (message.action === 'ping') return pingViewer(deps, connectionId, message.ref);
  const request = topicRequest(message);
  if (message.action === 'subscribe') return subscribeViewer(deps, connectionId, request, echoOf(message));
  return unsubscribeViewer(deps, connectionId, request, echoOf(message));
};

type SocketEvent = APIGatewayProxyWebsocketEventV2 & { headers?: Record<string, string | undefined> };

export const makeHandler =
  (deps: () => ViewerSubscribeDeps | undefined, problems: () => readonly string[]) =>
  async (event: SocketEvent, context?: Context): Promise<APIGatewayProxyResultV2> => {
    const { routeKey, connectionId } = event.requestContext;
    const requestId = context?.awsRequestId ?? event.requestContext.requestId;
    const channel = problems().length > 0 ? undefined : deps();
    if (channel === undefined) {
      logger.error('a viewer message arrived but the channel is not configured', { route: routeKey, connectionId });
      return { statusCode: 503 };
    }
    const parsed = parse(event.body);
    if ('refusal' in parsed) {
      await channel.push.send(connectionId, parsed.refusal);
      return { statusCode: 200 };
    }
    try {
      await onMessage(channel, connectionId, parsed.message);
    } catch (error) {
      const answer = errorMessage(error, parsed.message.ref, requestId);
      if (answer.type === 'error' && answer.error.code === 'INVALID_TOKEN') {
        await channel.push.send(connectionId, answer);
        await channel.push.close(connectionId);
      } else await channel.push.send(connectionId, answer);
    }
    return { statusCode: 200 };
  };

export const handler = makeHandler(viewerChannelDeps, startupProblems);

// ---- the viewer side of the agents' function (agent-socket.ts) ----

/** `$connect` with `?sse_token=`: 200 (stored), 401 (bad, used or expired token), 429 (too many), 500. */
export const viewerConnect = async (
  deps: ViewerChannelDeps,
  token: string,
  connectionId: string,
  log: Readonly<Record<string, unknown>>,
): Promise<number> => {
  try {
    const viewer = await connectViewer(deps, token, connectionId);
    logger.info('viewer connected', { ...log, userId: viewer.userId, expiresAt: viewer.expiresAt });
    return 200;
  } catch (error) {
    if (error instanceof InvalidTokenError) {
      logger.info('viewer connection refused: the token is not valid', log);
      return 401;
    }
    if (error instanceof DomainError && error.kind === 'rate_limited') {
      logger.info('viewer connection refused: too many open connections', log);
      return 429;
    }
    logger.error('viewer connect failed', { ...log, error });
    return 500;
  }
};

/** `$disconnect` of a connection that was not an agent's. */
export const viewerDisconnect = (deps: ViewerChannelDeps, connectionId: string): Promise<void> =>
  disconnectViewer(deps, connectionId);

/**
 * A message API Gateway routed to `$default` from a viewer connection (not JSON, or an unknown action): answered
 * with the viewer's VALIDATION_ERROR. False when the connection is not a viewer's (the agent's refusal applies).
 */
export const viewerDefault = async (
  deps: ViewerChannelDeps,
  connectionId: string,
  body: string | undefined,
): Promise<boolean> => {
  if ((await deps.registry.get(connectionId)) === undefined) return false;
  const parsed = parse(body);
  await deps.push.send(
    connectionId,
    'refusal' in parsed ? parsed.refusal : refusal(parsed.message.ref, 'VALIDATION_ERROR', USAGE),
  );
  return true;
};

/** The viewer channel's deps, or undefined without a WebSocket API. */
export const viewerDeps = (): ViewerSubscribeDeps | undefined => viewerChannelDeps();
