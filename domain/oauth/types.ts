// OAuth 2.0 clients (RFC 6749 section 2): who may ask the service's authorization server for tokens.
import type { Permission } from '../identity/permissions.js';

export const GRANT_TYPES = ['authorization_code', 'client_credentials', 'refresh_token'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];

export interface OAuthClient {
  readonly id: string;
  readonly shortId: string;
  /** The public identifier a client sends (`client_id`), random, never reused. */
  readonly clientId: string;
  readonly name: string;
  readonly description: string | null;
  /** Exact-match redirect URIs (https, or http to a loopback address). */
  readonly redirectUris: readonly string[];
  readonly grantTypes: readonly GrantType[];
  /** Permission names the client may ever be granted: never beyond its creator's when they were set. */
  readonly scopes: readonly Permission[];
  /** Confidential clients authenticate with a secret; public clients (native apps, SPAs) cannot keep one. */
  readonly isConfidential: boolean;
  /** A hex SHA-256 of the secret (a 256-bit random token): the secret itself is shown once. null for public clients. */
  readonly secretHash: string | null;
  /** false after DELETE: no new authorizations or token exchanges; tokens issued stay valid until they expire. */
  readonly isActive: boolean;
  /** The creator's tenant (null: a global creator). */
  readonly tenantId: string | null;
  /** The user who created it: client_credentials tokens act for them, narrowed to the client's scopes. */
  readonly createdBy: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Incremented by every write: updates are conditioned on it. */
  readonly revision: number;
}

/** The fields PATCH changes; only the ones present are written. */
export type OAuthClientChanges = Partial<
  Pick<OAuthClient, 'name' | 'description' | 'redirectUris' | 'grantTypes' | 'scopes' | 'isActive' | 'secretHash'>
>;
