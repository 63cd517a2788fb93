// Ports of the single sign-on context. Adapters: infra/dynamodb/identity-provider-repository.ts (providers, mappings,
// sign-in states), infra/dynamodb/user-repository.ts (links), infra/oidc/ (the guarded HTTP client and jose).
import type { User } from '../identity/types.js';
import type {
  DiscoveredEndpoints,
  IdentityLink,
  IdentityProvider,
  IdTokenClaims,
  RoleMapping,
  SignInState,
} from './types.js';

export interface IdentityProviderRepository {
  /** ConflictError (field `name` or `issuer`) when either is taken in the provider's scope (its tenant, or global). */
  create(provider: IdentityProvider): Promise<void>;
  /** By UUID or short id. */
  get(idOrShortId: string): Promise<IdentityProvider | undefined>;
  /** Providers of one tenant (null: the global ones), or of every tenant (`all`), oldest first. */
  list(tenant: string | null | 'all'): Promise<readonly IdentityProvider[]>;
  /**
   * Writes `next` if the stored provider is still at `previous.revision` (moving the name and issuer claims);
   * ConflictError when a new name or issuer is taken or the provider changed meanwhile.
   */
  update(previous: IdentityProvider, next: IdentityProvider): Promise<void>;
  /** Deletes the provider, its claims and its mappings; ConflictError while users are linked to it. */
  delete(provider: IdentityProvider): Promise<void>;
  listMappings(providerId: string): Promise<readonly RoleMapping[]>;
  putMapping(mapping: RoleMapping): Promise<void>;
  deleteMapping(mapping: RoleMapping): Promise<void>;
}

/** Sign-ins in flight, each consumed at most once. */
export interface SignInStates {
  put(state: SignInState): Promise<void>;
  /** Deletes the state and answers it, atomically; undefined when unknown, used already or expired. */
  consume(stateHash: string, now: Date): Promise<SignInState | undefined>;
}

/** The users' side of single sign-on (UserRepository's adapter implements it too). */
export interface LinkedUsers {
  findByLink(providerId: string, subject: string): Promise<User | undefined>;
  /**
   * Links an existing user (still at `user.revision`, not linked yet) and counts it on the provider, atomically;
   * false when the user changed meanwhile, or the subject is linked to another user already.
   */
  link(user: User, link: IdentityLink, at: Date): Promise<boolean>;
  /** Writes roles, mapping-granted roles and the link's provider name if the user is still at `user.revision`. */
  applySignIn(user: User, changes: SignInChanges, at: Date): Promise<boolean>;
}

export interface SignInChanges {
  readonly roles: readonly string[];
  readonly mappedRoles: readonly string[];
  readonly identityLink: IdentityLink;
}

/**
 * Why a request to a provider was refused or failed: a sentence for an administrator, never a secret. `refusal`: the
 * provider answered and said no with an OAuth error (RFC 6749 5.2, e.g. `invalid_grant`); otherwise the provider
 * failed (unreachable, a timeout, not 2xx without an OAuth error, an answer that does not parse).
 */
export class ProviderRequestError extends Error {
  constructor(
    message: string,
    readonly refusal = false,
  ) {
    super(message);
    this.name = 'ProviderRequestError';
  }
}

/** What the token endpoint answered to a client-authenticated request with a code it cannot know. */
export interface TokenEndpointProbe {
  readonly status: number;
  /** The OAuth error code (RFC 6749 5.2), when the answer carried one. */
  readonly error: string | null;
}

/**
 * The server-side requests to an identity provider. Every one is guarded against SSRF (no private, loopback,
 * link-local or metadata address unless configured, no redirect to one, a timeout and a size cap); refusals and
 * failures throw ProviderRequestError.
 */
export interface OidcGateway {
  /** The metadata document of `issuer` (its /.well-known/openid-configuration), with `issuer` matching. */
  discover(issuer: string): Promise<DiscoveredEndpoints>;
  /** The number of usable keys of the JWKS at `jwksUri`. */
  jwksKeyCount(jwksUri: string): Promise<number>;
  probeTokenEndpoint(
    provider: IdentityProvider,
    clientSecret: string,
    redirectUri: string,
  ): Promise<TokenEndpointProbe>;
  /** Exchanges an authorization code (with its PKCE verifier) for the ID token. */
  exchangeCode(
    provider: IdentityProvider,
    clientSecret: string,
    exchange: { readonly code: string; readonly codeVerifier: string; readonly redirectUri: string },
  ): Promise<{ readonly idToken: string }>;
  /**
   * Verifies an ID token against the provider's JWKS (cached per container, refreshed on an unknown key id):
   * signature, algorithm among the provider's, issuer, audience (the client id), expiry. Throws InvalidTokenError.
   */
  verifyIdToken(provider: IdentityProvider, idToken: string, now: Date): Promise<IdTokenClaims>;
}
