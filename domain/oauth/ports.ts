// Ports of the OAuth context. Adapter: infra/dynamodb/oauth-client-repository.ts.
import type { OAuthClient, OAuthClientChanges } from './types.js';

export interface OAuthClientRepository {
  create(client: OAuthClient): Promise<void>;
  get(id: string): Promise<OAuthClient | undefined>;
  findByClientId(clientId: string): Promise<OAuthClient | undefined>;
  /** Clients of one tenant (null: the global ones), or of every tenant (`all`), oldest first. */
  list(tenant: string | null | 'all'): Promise<readonly OAuthClient[]>;
  /** Writes the changes if the client is still at `revision`; the updated client, or undefined when it moved on. */
  update(client: OAuthClient, changes: OAuthClientChanges, at: string): Promise<OAuthClient | undefined>;
}

/** Revoked OAuth access tokens by token id (JWT `jti`), kept until the token would have expired. */
export interface TokenRevocations {
  revoke(tokenId: string, expiresAtSeconds: number): Promise<void>;
  isRevoked(tokenId: string): Promise<boolean>;
}
