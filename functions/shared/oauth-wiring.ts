// The composition root, OAuth part: the clients' repository, revocations, and what the admin endpoints and the
// authorization server's endpoints need (what authentication needs is in oauth-authentication-wiring.ts).
import type { OAuthClientsDeps } from '../../domain/oauth/clients.js';
import type { AuthorizationDeps } from '../../domain/oauth/authorization.js';
import type { SealedNotes } from '../../domain/oauth/ports.js';
import type { OAuthTokenDeps } from '../../domain/oauth/tokens.js';
import { randomTokens } from '../../infra/crypto/tokens.js';
import { DynamoOAuthGrantStore } from '../../infra/dynamodb/oauth-grants.js';
import { identityDeps, tokenService } from './identity-wiring.js';
import { oauthAuthenticationDeps, oauthClients } from './oauth-authentication-wiring.js';
import { once } from './once.js';
import { ids, infra, sharedBucket } from './wiring.js';

export const oauthClientsDeps = once((): OAuthClientsDeps => ({
  clients: oauthClients(),
  users: identityDeps().users,
  ids: ids(),
  clock: infra().clock,
  random: randomTokens,
}));

/** The issuer: the service's public base URL, without a trailing slash (RFC 8414). */
export const oauthIssuer = (): string => infra().config.PUBLIC_BASE_URL.replace(/\/+$/, '');

export const oauthTokenDeps = once((): AuthorizationDeps => {
  const identity = identityDeps();
  return {
    grants: new DynamoOAuthGrantStore(infra().db, infra().config.TABLE_NAME),
    refreshTokenTtlSeconds: identity.settings.refreshTokenTtlSeconds,
    ...oauthAuthenticationDeps(),
    tokens: identity.tokens,
    users: identity.users,
    roles: identity.roles,
    random: identity.random,
    clock: infra().clock,
    accessTokenTtlSeconds: identity.settings.accessTokenTtlSeconds,
    limiter: sharedBucket,
  };
});

/** The authorization page's sealed notes: signed by the service's token keys, under an audience of their own. */
export const oauthNotes = (): SealedNotes => tokenService();

export type { OAuthTokenDeps };
