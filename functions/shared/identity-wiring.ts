// The composition root, identity part: users, sessions, tokens, keys, roles, and the authenticator every
// protected endpoint uses (passed to the area routers). Imported by the functions that authenticate or administer identity.
import { authenticate } from '../../domain/identity/authenticate.js';
import { ensureBootstrapAdmin } from '../../domain/identity/bootstrap-admin.js';
import type { IdentityDeps } from '../../domain/identity/deps.js';
import { roleDirectory, type RolesDeps } from '../../domain/identity/roles-admin.js';
import type { UsersDeps } from '../../domain/identity/users-admin.js';
import type { ViewerCloser } from '../../domain/streams/viewer-ports.js';
import { argon2PasswordHasher } from '../../infra/crypto/password-hasher.js';
import { KeyRingCipher } from '../../infra/crypto/key-ring-source.js';
import { newApiKey, randomTokens } from '../../infra/crypto/tokens.js';
import { otplibTotp } from '../../infra/crypto/totp.js';
import { DynamoApiKeyRepository } from '../../infra/dynamodb/api-key-repository.js';
import { DynamoIdentityProviderRepository } from '../../infra/dynamodb/identity-provider-repository.js';
import { keys } from '../../infra/dynamodb/keys.js';
import { DynamoLoginThrottle } from '../../infra/dynamodb/login-throttle.js';
import { DynamoPendingTwoFactorAttempts } from '../../infra/dynamodb/pending-two-factor-repository.js';
import { DynamoRoleRepository } from '../../infra/dynamodb/role-repository.js';
import { DynamoSessionRepository } from '../../infra/dynamodb/session-repository.js';
import { DynamoSseTokenRepository } from '../../infra/dynamodb/sse-token-repository.js';
import { DynamoUserRepository } from '../../infra/dynamodb/user-repository.js';
import { JoseTokenService } from '../../infra/tokens/jose-token-service.js';
import { keyRing } from './key-ring.js';
import { oauthAuthenticationDeps } from './oauth-authentication-wiring.js';
import { once, onceAsync } from './once.js';
import { viewerCloser } from './viewer-connections-wiring.js';
import type { UserAuthentication } from './shell.js';
import { ids, infra } from './wiring.js';

export const secretCipher = once(() => new KeyRingCipher(keyRing()));

export const tokenService = once(() => {
  const { config: cfg, db, clock } = infra();
  return new JoseTokenService(db, cfg.TABLE_NAME, secretCipher(), cfg.PUBLIC_BASE_URL, clock);
});

const users = once(() => new DynamoUserRepository(infra().db, infra().config.TABLE_NAME));
const roles = once(() => new DynamoRoleRepository(infra().db, infra().config.TABLE_NAME));

export const rolesDeps = once((): RolesDeps => ({
  roles: roles(),
  users: users(),
  roleMappings: new DynamoIdentityProviderRepository(infra().db, infra().config.TABLE_NAME),
  ids: ids(),
  clock: infra().clock,
}));

export const usersDeps = once((): UsersDeps => {
  const identity = identityDeps();
  return {
    users: users(),
    roles: roles(),
    apiKeys: identity.apiKeys,
    hasher: identity.hasher,
    ids: ids(),
    clock: infra().clock,
    identityProviders: new DynamoIdentityProviderRepository(infra().db, infra().config.TABLE_NAME),
  };
});

export const identityDeps = once((): IdentityDeps => {
  const { config: cfg, db, clock } = infra();
  return {
    oauth: oauthAuthenticationDeps(),
    users: users(),
    sessions: new DynamoSessionRepository(db, cfg.TABLE_NAME),
    tokens: tokenService(),
    roles: roleDirectory(roles()),
    hasher: argon2PasswordHasher,
    random: randomTokens,
    throttle: new DynamoLoginThrottle(db, cfg.TABLE_NAME, {
      maxFailures: cfg.LOGIN_MAX_FAILURES,
      windowSeconds: cfg.LOGIN_WINDOW_SECONDS,
      lockoutSeconds: cfg.LOGIN_LOCKOUT_SECONDS,
    }),
    twoFactorThrottle: new DynamoLoginThrottle(
      db,
      cfg.TABLE_NAME,
      {
        maxFailures: cfg.TWO_FACTOR_MAX_FAILURES,
        windowSeconds: cfg.TWO_FACTOR_WINDOW_SECONDS,
        lockoutSeconds: cfg.TWO_FACTOR_LOCKOUT_SECONDS,
      },
      keys.twoFactorThrottle,
    ),
    pendingTwoFactor: new DynamoPendingTwoFactorAttempts(db, cfg.TABLE_NAME),
    ids: ids(),
    clock,
    apiKeys: new DynamoApiKeyRepository(db, cfg.TABLE_NAME),
    newApiKey,
    totp: otplibTotp,
    sseTokens: new DynamoSseTokenRepository(db, cfg.TABLE_NAME),
    cipher: secretCipher(),
    issuerName: cfg.STAGE === 'prod' ? 'Deployer' : `Deployer (${cfg.STAGE})`,
    settings: {
      accessTokenTtlSeconds: cfg.ACCESS_TOKEN_TTL_SECONDS,
      refreshTokenTtlSeconds: cfg.REFRESH_TOKEN_TTL_SECONDS,
      twoFactorPendingTtlSeconds: cfg.TWO_FACTOR_PENDING_TTL_SECONDS,
      twoFactorCodesPerToken: cfg.TWO_FACTOR_CODES_PER_TOKEN,
      sseTokenTtlSeconds: cfg.SSE_TOKEN_TTL_SECONDS,
      sseSessionTtlSeconds: cfg.SSE_SESSION_TTL_SECONDS,
      // The viewer channel is the agents' WebSocket API: it exists when both its URL and its @connections do.
      viewerSocketUrl:
        cfg.AGENT_SOCKET_URL !== undefined && cfg.AGENT_SOCKET_ENDPOINT !== undefined ? cfg.AGENT_SOCKET_URL : null,
    },
  };
});

/** Closes the viewer connections of a revoked credential; built on first use (most requests revoke nothing). */
const viewers: ViewerCloser = {
  close: async (selector, reason) => {
    await viewerCloser()?.close(selector, reason);
  },
};

/**
 * The deps of the use cases that revoke a credential or end a session (logout, password change, API key revoke,
 * the SSE session's end; a user's deactivation and deletion): with the viewer closer. Only their functions (auth,
 * admin) bundle the channel's adapters; the pure marks let every other bundle drop them.
 */
export const revokingIdentityDeps = /* @__PURE__ */ once((): IdentityDeps => ({ ...identityDeps(), viewers }));
export const revokingUsersDeps = /* @__PURE__ */ once((): UsersDeps => ({ ...usersDeps(), viewers }));

/** The user authenticator of every protected endpoint (an access token or an API key). */
export const userAuthentication: UserAuthentication = {
  authenticate: (authorization, ip) => authenticate(identityDeps(), authorization, ip),
};

/** In the cloud the first admin is created on the first login of a container, when both variables are set. */
export const bootstrapAdminOnce = onceAsync(async (): Promise<void> => {
  const { BOOTSTRAP_ADMIN_EMAIL: email, BOOTSTRAP_ADMIN_PASSWORD: password } = infra().config;
  if (email !== undefined && password !== undefined) await ensureBootstrapAdmin(identityDeps(), { email, password });
});
