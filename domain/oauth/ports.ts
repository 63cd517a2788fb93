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

/**
 * Revoked OAuth access tokens by token id (JWT `jti`), kept until the token would have expired, and revoked grants
 * (an authorization and every token it produced), kept until the last of its tokens would have expired.
 */
export interface TokenRevocations {
  revoke(tokenId: string, expiresAtSeconds: number): Promise<void>;
  revokeGrant(grantId: string, untilSeconds: number): Promise<void>;
  /** Whether the token, or the grant it came from, is revoked (one read). */
  isRevoked(tokenId: string, grantId?: string): Promise<boolean>;
  isGrantRevoked(grantId: string): Promise<boolean>;
}

/** Short-lived signed notes for one purpose (the authorization page's hidden fields): never a credential. */
export interface SealedNotes {
  seal(purpose: string, data: Readonly<Record<string, unknown>>, ttlSeconds: number): Promise<string>;
  /** The note's data; InvalidTokenError when forged, expired or of another purpose. */
  unseal(purpose: string, note: string): Promise<Readonly<Record<string, unknown>>>;
}

/** An authorization code (RFC 6749 4.1.2), stored by the hash of its value. */
export interface AuthorizationCode {
  readonly codeHash: string;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly userId: string;
  readonly scope: readonly string[];
  /** PKCE (RFC 7636) S256 challenge; null when the (confidential) client sent none. */
  readonly codeChallenge: string | null;
  readonly grantId: string;
  /** Epoch ms the user signed in at the authorization page. */
  readonly authTime: number;
  /** Epoch ms. */
  readonly expiresAt: number;
}

/** One refresh token of a grant; rotation retires it (`rotated`) and stores its successor. */
export interface RefreshGrant {
  readonly tokenHash: string;
  readonly grantId: string;
  readonly clientId: string;
  readonly userId: string;
  readonly scope: readonly string[];
  readonly authTime: number;
  /** Epoch ms. */
  readonly expiresAt: number;
  readonly status: 'active' | 'rotated';
}

/** Codes and refresh tokens of the authorization code grant. */
export interface OAuthGrantStore {
  saveCode(code: AuthorizationCode): Promise<void>;
  getCode(codeHash: string): Promise<AuthorizationCode | undefined>;
  /** Marks the code used: true for the one call that did, false when it was used before. */
  useCode(codeHash: string): Promise<boolean>;
  saveRefresh(token: RefreshGrant): Promise<void>;
  getRefresh(tokenHash: string): Promise<RefreshGrant | undefined>;
  /** Retires `old` and stores `next` in one transaction, if `old` is still active and its grant not revoked. */
  rotateRefresh(oldHash: string, next: RefreshGrant): Promise<boolean>;
}
