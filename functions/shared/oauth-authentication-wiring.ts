// The composition root, the OAuth part that authentication needs: the clients' repository and the revocations,
// to accept OAuth access tokens on the API. Its own module so identity-wiring and oauth-wiring both import it
// and neither imports the other's way back.
import type { OAuthTokenDeps } from '../../domain/oauth/tokens.js';
import { DynamoOAuthClientRepository } from '../../infra/dynamodb/oauth-client-repository.js';
import { DynamoTokenRevocations } from '../../infra/dynamodb/oauth-revocations.js';
import { once } from './once.js';
import { infra } from './wiring.js';

export const oauthClients = once(() => new DynamoOAuthClientRepository(infra().db, infra().config.TABLE_NAME));

/** What authentication needs to accept OAuth access tokens on the API. */
export const oauthAuthenticationDeps = once((): Pick<OAuthTokenDeps, 'clients' | 'revocations'> => ({
  clients: oauthClients(),
  revocations: new DynamoTokenRevocations(infra().db, infra().config.TABLE_NAME),
}));
