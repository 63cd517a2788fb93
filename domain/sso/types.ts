// Single sign-on: OpenID Connect identity providers, their role mappings, and the short-lived state of one sign-in.

/** Asymmetric JWS algorithms an ID token may be signed with (never `none`, never HMAC with the client secret). */
export const ID_TOKEN_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;
export type IdTokenAlgorithm = (typeof ID_TOKEN_ALGORITHMS)[number];

export const TOKEN_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'] as const;
export type TokenAuthMethod = (typeof TOKEN_AUTH_METHODS)[number];

export interface IdentityProvider {
  readonly id: string;
  readonly shortId: string;
  readonly name: string;
  readonly type: 'oidc';
  /** The issuer identifier (`iss` of its ID tokens), without a trailing slash. */
  readonly issuer: string;
  readonly clientId: string;
  /** The client secret, encrypted (SecretCipher, context `idp:<id>`); never answered. */
  readonly clientSecret: string;
  readonly tokenAuthMethod: TokenAuthMethod;
  readonly scopes: readonly string[];
  readonly authorizationEndpoint: string;
  readonly tokenEndpoint: string;
  readonly userinfoEndpoint: string | null;
  readonly jwksUri: string;
  readonly idTokenAlgorithms: readonly IdTokenAlgorithm[];
  /** The ID token claim carrying the email, and the one carrying the groups the role mappings match. */
  readonly emailClaim: string;
  readonly groupsClaim: string;
  /** Just-in-time provisioning: an unknown user is created on first sign-in, into `jitTenantId`. */
  readonly jitProvisioning: boolean;
  readonly jitTenantId: string | null;
  /**
   * Just-in-time provisioning also for an email the provider does not assert as verified (`email_verified`). Off by
   * default; only a global caller turns it on (emails are unique service-wide), and a tenant-scoped caller who changes
   * who the provider is (issuer, client, endpoints) turns it off. Linking by email always needs a verified email.
   */
  readonly jitTrustUnverifiedEmail: boolean;
  /** On a first sign-in, link an existing unlinked user whose email the provider asserts as verified. */
  readonly linkByEmail: boolean;
  /** The provider's own sign-in (and its MFA) stands in for the user's two-factor code. */
  readonly trustedFor2fa: boolean;
  readonly enabled: boolean;
  /** The creator's tenant; null: a global provider. */
  readonly tenantId: string | null;
  /**
   * The permissions of whoever last set the provider's trust (issuer, client, endpoints, email linking): linking by
   * email never takes over a user holding more, so a provider cannot be a way into a stronger account.
   */
  readonly trustCeiling: readonly string[];
  readonly createdBy: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Users linked to the provider (maintained with each link and user deletion): no delete while above 0. */
  readonly linkedUsers: number;
  /** Incremented by every write: updates are conditioned on it. */
  readonly revision: number;
}

export interface RoleMapping {
  readonly id: string;
  readonly shortId: string;
  readonly providerId: string;
  /** A value the provider's groups claim carries (a group name), matched exactly. */
  readonly claimValue: string;
  /** The role name granted. */
  readonly role: string;
  /**
   * The mapping applies only to users of this tenant; null: to every user the provider signs in. A tenant provider's
   * mappings are of its tenant (a null one stored before that rule reads as the provider's tenant).
   */
  readonly tenantId: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** One sign-in in flight: created by the redirect to the provider, consumed once by its callback. */
export interface SignInState {
  /** SHA-256 (hex) of the `state` parameter. */
  readonly stateHash: string;
  readonly providerId: string;
  readonly nonce: string;
  readonly codeVerifier: string;
  /** SHA-256 (hex) of the browser-binding cookie set with the redirect. */
  readonly bindingHash: string;
  readonly returnTo: string;
  readonly expiresAt: number; // epoch ms
}

export type { IdentityLink } from '../identity/types.js';

/** The provider's metadata document (OpenID Connect Discovery 1.0), the members the service uses. */
export interface DiscoveredEndpoints {
  readonly issuer: string;
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly userinfo_endpoint: string | null;
  readonly jwks_uri: string;
  readonly scopes_supported: readonly string[];
  readonly claims_supported: readonly string[];
  readonly id_token_signing_alg_values_supported: readonly string[];
  readonly token_endpoint_auth_methods_supported: readonly string[];
  readonly code_challenge_methods_supported: readonly string[];
}

/** The verified claims of an ID token (signature, issuer, audience, expiry and algorithm already checked). */
export type IdTokenClaims = Readonly<Record<string, unknown>> & { readonly sub: string };
