// The composition root, OAuth part: the clients' repository and what the admin endpoints need.
import type { OAuthClientsDeps } from '../../domain/oauth/clients.js';
import { randomTokens } from '../../infra/crypto/tokens.js';
import { DynamoOAuthClientRepository } from '../../infra/dynamodb/oauth-client-repository.js';
import { once } from './once.js';
import { ids, infra } from './wiring.js';

export const oauthClientsDeps = once((): OAuthClientsDeps => ({
  clients: new DynamoOAuthClientRepository(infra().db, infra().config.TABLE_NAME),
  ids: ids(),
  clock: infra().clock,
  random: randomTokens,
}));
