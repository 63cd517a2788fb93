// The viewer channel's registry and push (the WebSocket API the agents use, its @connections client), and the
// ViewerCloser identity's use cases call after revoking a credential. Kept apart from viewer-wiring.ts (which needs
// the identity wiring to verify tokens) so identity-wiring can import the closer without an import circle, and so
// a writer that pushes to viewers loads only these adapters.
import { sseGrantStillValid } from '../../domain/identity/sse-tokens.js';
import type { ViewerCloser, ViewerPush, ViewerRegistry } from '../../domain/streams/viewer-ports.js';
import { viewerCloser as closerOver } from '../../domain/streams/viewer-revocation.js';
import type { Warn } from '../../domain/streams/ports.js';
import { ApiGatewayViewerPush } from '../../infra/apigateway/viewer-connections.js';
import { DynamoApiKeyRepository } from '../../infra/dynamodb/api-key-repository.js';
import { DynamoSseTokenRepository } from '../../infra/dynamodb/sse-token-repository.js';
import { DynamoUserRepository } from '../../infra/dynamodb/user-repository.js';
import { DynamoViewerRegistry } from '../../infra/dynamodb/viewer-repository.js';
import { logger } from './logger.js';
import { once } from './once.js';
import { infra } from './wiring.js';

/** The channel's warnings, to the Lambda logger. */
export const viewerWarn: Warn = (message, fields) => logger.warn(message, { ...fields });

export const viewerRegistry = /* @__PURE__ */ once(
  (): ViewerRegistry => new DynamoViewerRegistry(infra().db, infra().config.TABLE_NAME),
);

/** undefined when the service offers no WebSocket API (AGENT_SOCKET_ENDPOINT unset): there is no viewer channel. */
export const viewerPush = /* @__PURE__ */ once((): ViewerPush | undefined => {
  const { config: cfg } = infra();
  return cfg.AGENT_SOCKET_ENDPOINT === undefined
    ? undefined
    : new ApiGatewayViewerPush(cfg.AGENT_SOCKET_ENDPOINT, cfg.AWS_REGION);
});

/** Whether a viewer's grant still holds (the SSE streams' re-check, on the repositories it reads). */
export const viewerGrantCheck = /* @__PURE__ */ once(() => {
  const { config: cfg, db, clock } = infra();
  const deps = {
    users: new DynamoUserRepository(db, cfg.TABLE_NAME),
    apiKeys: new DynamoApiKeyRepository(db, cfg.TABLE_NAME),
    sseTokens: new DynamoSseTokenRepository(db, cfg.TABLE_NAME),
    clock,
  };
  return { stillValid: (grant: Parameters<typeof sseGrantStillValid>[1]) => sseGrantStillValid(deps, grant), deps };
});

/** The closer identity's use cases call; undefined without a viewer channel. */
export const viewerCloser = /* @__PURE__ */ once((): ViewerCloser | undefined => {
  const push = viewerPush();
  if (push === undefined) return undefined;
  return closerOver({
    registry: viewerRegistry(),
    push,
    warn: viewerWarn,
    auth: { stillValid: viewerGrantCheck().stillValid },
  });
});

/** What the sweep needs to close expired viewer connections; undefined without a viewer channel. */
export const viewerExpiryDeps = /* @__PURE__ */ once(() => {
  const push = viewerPush();
  return push === undefined ? undefined : { registry: viewerRegistry(), push, clock: infra().clock, warn: viewerWarn };
});
