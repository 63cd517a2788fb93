// The composition root, OAuth part: the clients' repository, revocations, and what the admin endpoints and the
// authorization server's endpoints need.
import type { OAuthClientsDeps } from '../../domain/oauth/clients.js';
import type { OAuthTokenDeps } from '../../domain/oauth/tokens.js';
import { randomTokens } from '../../infra/crypto/tokens.js';
import { DynamoOAuthClientRepository } from '../../infra/dynamodb/oauth-client-repository.js';
import { DynamoTokenRevocations } from '../../infra/dynamodb/oauth-revocations.js';
import { identityDeps } from './identity-wiring.js';
import { once } from './once.js';
import { ids, infra, sharedBucket } from './wiring.js';

const clients = once(() => new DynamoOAuthClientRepository(infra().db, infra().config.TABLE_NAME));

export const oauthClientsDeps = once((): OAuthClientsDeps => ({
  clients: clients(),
  ids: ids(),
  clock: infra().clock,
  random: randomTokens,
}));

/** What authentication needs to accept OAuth access tokens on the API. */
export const oauthAuthenticationDeps = once((): Pick<OAuthTokenDeps, 'clients' | 'revocations'> => ({
  clients: clients(),
  revocations: new DynamoTokenRevocations(infra().db, infra().config.TABLE_NAME),
}));

/** The issuer: the service's public base URL, without a trailing slash (RFC 8414). */
export const oauthIssuer = (): string => infra().config.PUBLIC_BASE_URL.replace(/\/+$/, '');

export const oauthTokenDeps = once((): OAuthTokenDeps => {
  const identity = identityDeps();
  return {
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
