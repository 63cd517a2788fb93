// The composition root of the viewer channel (domain/streams/viewer-channel.ts): the token check of the SSE
// endpoints on the few repositories it reads (not the whole identity wiring: the agents' socket function loads this
// for a viewer's connect), the registry and push, the deployments and their events, and the resource topics' deps.
import { verifySseGrant } from '../../domain/identity/sse-tokens.js';
import { roleDirectory } from '../../domain/identity/roles-admin.js';
import type { ViewerAuth, ViewerSubscribeDeps } from '../../domain/streams/viewer-channel.js';
import { resourceSources } from '../../domain/streams/resource-sources.js';
import { agentRelease } from '../../infra/config.js';
import { randomTokens } from '../../infra/crypto/tokens.js';
import { DynamoDeploymentEventStore } from '../../infra/dynamodb/deployment-event-store.js';
import { DynamoDeploymentRepository } from '../../infra/dynamodb/deployment-repository.js';
import { DynamoPendingRequestRepository } from '../../infra/dynamodb/pending-request-repository.js';
import { DynamoRoleRepository } from '../../infra/dynamodb/role-repository.js';
import { DynamoTargetRepository } from '../../infra/dynamodb/target-repository.js';
import { once } from './once.js';
import { SERVER_VERSION } from './version.js';
import { viewerGrantCheck, viewerPush, viewerRegistry, viewerWarn } from './viewer-connections-wiring.js';
import { infra } from './wiring.js';

export const viewerAuth = once((): ViewerAuth => {
  const { config: cfg, db } = infra();
  const { stillValid, deps } = viewerGrantCheck();
  const grantDeps = {
    ...deps,
    roles: roleDirectory(new DynamoRoleRepository(db, cfg.TABLE_NAME)),
    random: randomTokens,
  };
  return {
    verify: (token) => verifySseGrant(grantDeps, token),
    stillValid,
    apiKeyExpiry: async (id) => (await deps.apiKeys.get(id))?.expiresAt ?? null,
  };
});

/** undefined when the service offers no WebSocket API (AGENT_SOCKET_ENDPOINT unset). */
export const viewerChannelDeps = once((): ViewerSubscribeDeps | undefined => {
  const push = viewerPush();
  if (push === undefined) return undefined;
  const { config: cfg, db, clock } = infra();
  return {
    registry: viewerRegistry(),
    push,
    auth: viewerAuth(),
    clock,
    connectionsPerUser: cfg.STREAMS_PER_USER,
    warn: viewerWarn,
    deployments: new DynamoDeploymentRepository(db, cfg.TABLE_NAME),
    events: new DynamoDeploymentEventStore(db, cfg.TABLE_NAME),
    resources: {
      lists: {
        deployments: new DynamoDeploymentRepository(db, cfg.TABLE_NAME),
        pending: new DynamoPendingRequestRepository(db, cfg.TABLE_NAME),
        targets: new DynamoTargetRepository(db, cfg.TABLE_NAME),
        clock,
      },
      sources: resourceSources({ server: SERVER_VERSION, agentRelease }),
    },
    wait: (milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds)),
  };
});
