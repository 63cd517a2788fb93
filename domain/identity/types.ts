import type { Permission } from './permissions.js';

export type UserStatus = 'active' | 'inactive' | 'locked' | 'pending';
export const USER_STATUSES: readonly UserStatus[] = ['active', 'inactive', 'locked', 'pending'];

export interface TwoFactor {
  readonly enabled: boolean;
  /** The TOTP secret, encrypted (SecretCipher, context `totp:<user id>`); set from setup on. */
  readonly secret: string | null;
  /** The last time step a code was accepted for: a code cannot be used twice. */
  readonly lastStep: number | null;
  /**
   * The unused recovery codes, as lookup hashes (TokenGenerator.hash of `<user id>:<code>`, never the codes): each
   * signs in once instead of a code. Issued when 2FA is turned on, replaced together; absent on older records.
   */
  readonly recoveryCodes?: readonly string[];
}

export interface User {
  readonly id: string;
  readonly shortId: string;
  readonly email: string;
  readonly username: string;
  readonly displayName: string | null;
  readonly status: UserStatus;
  readonly roles: readonly string[];
  readonly tenantId: string | null;
  /** Argon2id; null: no local password (a user provisioned by an identity provider signs in only through it). */
  readonly passwordHash: string | null;
  readonly twoFactor: TwoFactor;
  readonly emailVerified: boolean;
  /** Epoch ms: every access and refresh token issued at or before it is revoked (logout, deactivation). */
  readonly tokensValidAfter: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly lastLoginAt: string | null;
  /** Incremented by every write of the user item (login, 2FA, logout, admin edits): admin edits are conditioned on it. */
  readonly revision: number;
  /** The identity provider the user signs in with (domain/sso), by the provider's subject; absent or null: none. */
  readonly identityLink?: IdentityLink | null;
  /** Roles the user holds only through the provider's role mappings: removed when the claim stops carrying them. */
  readonly mappedRoles?: readonly string[];
}

/** How a user is linked to an identity provider: by the provider's subject (`sub`), unique per provider. */
export interface IdentityLink {
  readonly providerId: string;
  /** The provider's name when the link was last written (shown in the admin user record). */
  readonly providerName: string;
  readonly subject: string;
}

/** The fields an administrator changes (PATCH /admin/users/{id}); only the ones present are written. */
export type UserChanges = Partial<Pick<User, 'displayName' | 'status' | 'roles' | 'tenantId'>>;

/** What a delegated caller is using: a credential its owner made, acting for the owner (domain/identity/delegation.ts). */
export interface DelegatedCredential {
  /** `oauth`: an OAuth access token of either grant; `trigger`: a deploy trigger's signed call. */
  readonly type: 'api_key' | 'oauth' | 'trigger';
  /** The API key's id, the OAuth client's client_id, the trigger's id. */
  readonly id: string;
  /** What the credential names: an API key's or a trigger's name (an OAuth client's name is read when shown). */
  readonly name?: string;
  /** The permissions the credential was given (before they meet the owner's current ones). */
  readonly scopes: readonly Permission[];
  /** OAuth tokens: the grant they came from. */
  readonly grant?: 'client_credentials' | 'authorization_code';
}

/** Who is calling, as every use case after authentication sees it. */
export interface Caller {
  /**
   * `user`: a user session (a login's access token, or an SSE token it asked for). Every other kind is a delegated
   * credential (`credential`): `api_key`, `oauth` (an access token of the OAuth 2.0 authorization server, its client in
   * `clientId`), `trigger` (a deploy trigger's signed call).
   */
  readonly kind: 'user' | 'api_key' | 'oauth' | 'trigger';
  readonly userId: string;
  /**
   * The user's name as people read it (identity/names.ts personName); a delegated caller: its owner's. Read from the
   * user record authentication already holds; absent only where a caller is built without one (tests).
   */
  readonly userName?: string;
  /** null: a global user, who sees every tenant. */
  readonly tenantId: string | null;
  /** A user session: the user's roles. A delegated caller: only those of its owner's roles its permissions cover whole. */
  readonly roles: readonly string[];
  /** A user session: what its roles grant. A delegated caller: its scopes ∩ its owner's current permissions. */
  readonly permissions: ReadonlySet<Permission>;
  readonly apiKeyId?: string;
  readonly clientId?: string;
  /** Delegated callers only: the credential. */
  readonly credential?: DelegatedCredential;
  /** Delegated callers only: every current role of the owner (decides role-reserved powers with the scopes). */
  readonly ownerRoles?: readonly string[];
}

/** One refresh token. Tokens of one login form a family; rotation retires a token and issues its successor. */
export interface RefreshSession {
  readonly tokenHash: string;
  readonly userId: string;
  readonly familyId: string;
  readonly issuedAt: number; // epoch ms
  readonly expiresAt: number; // epoch ms
}

export type TokenType = 'access' | 'two_factor_pending' | 'oauth_access';

export interface TokenClaims {
  readonly type: TokenType;
  readonly userId: string;
  readonly tenantId: string | null;
  /** Epoch ms of issue (JWT `iat` has only seconds; revocation compares milliseconds). */
  readonly issuedAt: number;
  /** OAuth access tokens: the client, the grant it came from, the scope granted, the token id (JWT `jti`). */
  readonly oauth?: {
    readonly clientId: string;
    readonly grant: 'client_credentials' | 'authorization_code';
    readonly scope: readonly string[];
    readonly tokenId: string;
    /** Epoch seconds (JWT `exp`), as verified. */
    readonly expiresAt: number;
    /** The authorization (code, its refresh tokens) a user-delegated token came from: revoked together. */
    readonly grantId?: string;
    /** client_credentials: the user the client acts for (its creator), so that using the token reads no client. */
    readonly actsFor?: string;
  };
}

/** The body of login, 2FA verify and refresh, as the spec shows it. */
export interface SessionResult {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
  readonly user: UserView;
}

export interface UserView {
  readonly id: string;
  readonly email: string;
  readonly username: string;
  readonly display_name: string | null;
  readonly status: UserStatus;
  readonly roles: readonly string[];
  readonly permissions: readonly string[];
  readonly created_at: string;
}
