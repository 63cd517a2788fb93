// Sign-in through an identity provider (OpenID Connect authorization code flow with PKCE S256, state and nonce).
//
// startSsoSignIn: provider enabled -> a state record (TTL'd, single use) bound to the browser by a random cookie
//   value -> the provider's authorization URL.
// completeSsoSignIn: consume the state (once) -> same provider, same browser -> exchange the code -> verify the ID
//   token (jose, in the gateway: signature, algorithm, issuer, audience, expiry) -> nonce -> the user: linked by the
//   provider's subject; else, on a first sign-in and when the provider links by email, an existing unlinked user
//   whose email the provider asserts as verified (within the provider's trust ceiling and tenant); else a new user
//   when the provider provisions just in time and the email is verified (or the provider is trusted for unverified
//   ones); else refused -> a tenant provider signs in only users of its tenant (a user moved or made global since the
//   link is refused) -> active account -> role mappings of the provider's scope applied -> the user.
//   It answers the signed-in user and stops there, so any caller (the redirect callback, an OAuth authorize page)
//   completes the session its own way; ssoSession completes it as a password login does.
import { createHash } from 'node:crypto';
import { ConflictError, ExternalServiceError, NotFoundError, ValidationError } from '../errors.js';
import type { IdentityDeps } from '../identity/deps.js';
import { ForbiddenError, InvalidCredentialsError, InvalidTokenError } from '../identity/errors.js';
import { systemRole, type Permission } from '../identity/permissions.js';
import type { RoleRepository, SecretCipher, TokenGenerator, UserRepository } from '../identity/ports.js';
import { startSession, type StartedSession } from '../identity/sessions.js';
import type { User } from '../identity/types.js';
import type { Clock, IdGenerator } from '../shared/ports.js';
import {
  ProviderRequestError,
  type IdentityProviderRepository,
  type LinkedUsers,
  type OidcGateway,
  type SignInStates,
} from './ports.js';
import { redirectUriOf, secretContext } from './providers.js';
import type { IdentityLink, IdentityProvider, IdTokenClaims, RoleMapping } from './types.js';

export interface SsoDeps {
  readonly providers: Pick<IdentityProviderRepository, 'get' | 'listMappings'>;
  readonly states: SignInStates;
  readonly users: Pick<UserRepository, 'get' | 'findByEmail' | 'create'> & LinkedUsers;
  readonly roles: Pick<RoleRepository, 'findByName'>;
  readonly oidc: OidcGateway;
  readonly cipher: SecretCipher;
  readonly random: TokenGenerator;
  readonly ids: IdGenerator;
  readonly clock: Clock;
  readonly publicBaseUrl: string;
  /** How long a started sign-in may take at the provider. */
  readonly stateTtlSeconds: number;
}

/** Writes of one sign-in's user update before it answers 409: each retry follows another write to the same user. */
const WRITE_ATTEMPTS = 4;

/**
 * The path the browser is sent to after signing in: a same-origin relative path (`/`, `/deployments?x=1`), never
 * `//host`, `/\host`, an absolute URL or anything with control characters. undefined: refused.
 */
export const safeReturnTo = (raw: string | undefined): string | undefined => {
  if (raw === undefined || raw === '') return '/';
  if (raw.length > 2000 || !raw.startsWith('/') || raw.startsWith('//') || raw.startsWith('/\\')) return undefined;
  if ([...raw].some((ch) => ch.charCodeAt(0) < 0x21 || ch.charCodeAt(0) === 0x7f || ch === '\\')) return undefined;
  const base = 'http://return-to.invalid';
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    return undefined;
  }
  return url.origin === base ? `${url.pathname}${url.search}${url.hash}` : undefined;
};

const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');
/** RFC 7636 4.2, S256: BASE64URL(SHA256(ASCII(code_verifier))). */
export const pkceChallenge = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url');

const enabledProvider = async (deps: Pick<SsoDeps, 'providers'>, id: string): Promise<IdentityProvider> => {
  const provider = await deps.providers.get(id);
  if (provider === undefined) throw new NotFoundError('Identity provider', id);
  if (!provider.enabled)
    throw new ForbiddenError('This identity provider is disabled.', { reason: 'provider_disabled' });
  return provider;
};

export interface StartedSignIn {
  /** The provider's authorization URL, with the request. */
  readonly location: string;
  /** The browser-binding value for the short-lived cookie; only its hash is stored. */
  readonly binding: string;
  readonly expiresAt: Date;
}

export const startSsoSignIn = async (
  deps: SsoDeps,
  command: { readonly provider: string; readonly returnTo?: string | undefined },
): Promise<StartedSignIn> => {
  const returnTo = safeReturnTo(command.returnTo);
  if (returnTo === undefined)
    throw ValidationError.field('return_to', 'must be a relative path on this site, such as /deployments');
  const provider = await enabledProvider(deps, command.provider);
  const state = deps.random.random(32);
  const nonce = deps.random.random(32);
  const codeVerifier = deps.random.random(32);
  const binding = deps.random.random(32);
  const expiresAt = new Date(deps.clock.now().getTime() + deps.stateTtlSeconds * 1000);
  await deps.states.put({
    stateHash: sha256Hex(state),
    providerId: provider.id,
    nonce,
    codeVerifier,
    bindingHash: sha256Hex(binding),
    returnTo,
    expiresAt: expiresAt.getTime(),
  });
  const url = new URL(provider.authorizationEndpoint);
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: provider.clientId,
    redirect_uri: redirectUriOf(deps.publicBaseUrl, provider.id),
    scope: provider.scopes.join(' '),
    state,
    nonce,
    code_challenge: pkceChallenge(codeVerifier),
    code_challenge_method: 'S256',
  };
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return { location: url.toString(), binding, expiresAt };
};

export interface CallbackCommand {
  readonly provider: string;
  readonly state?: string | undefined;
  readonly code?: string | undefined;
  /** The provider's `error` parameter (RFC 6749 4.1.2.1), when it refused. */
  readonly error?: string | undefined;
  /** The browser-binding cookie's value. */
  readonly binding?: string | undefined;
}

export interface SsoSignedIn {
  /** The user after linking, provisioning and role mappings. */
  readonly user: User;
  readonly provider: IdentityProvider;
  /** The relative path the sign-in was started with. */
  readonly returnTo: string;
}

/** The values the groups claim carries (an array of strings, or one string). */
export const groupsOf = (claims: IdTokenClaims, claim: string): string[] => {
  const value = claims[claim];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
};

/**
 * Whether a mapping applies to a user of `userTenant` signed in by a provider of `providerTenant`. A mapping of a
 * tenant applies to that tenant's users; one without (null) to every user a global provider signs in. A tenant
 * provider's mappings are of its own tenant: one of another tenant never applies, and a null one stored before that
 * rule was enforced reads as the provider's tenant (never as "every tenant").
 */
const mappingApplies = (m: RoleMapping, userTenant: string | null, providerTenant: string | null): boolean => {
  const scope = m.tenantId ?? providerTenant;
  if (providerTenant !== null && scope !== providerTenant) return false;
  return scope === null || scope === userTenant;
};

/** The roles the mappings of a provider of `providerTenant` grant a user of `tenantId` carrying `groups`. */
export const rolesGranted = (
  mappings: readonly RoleMapping[],
  groups: readonly string[],
  tenantId: string | null,
  providerTenant: string | null,
): string[] => [
  ...new Set(
    mappings
      .filter((m) => groups.includes(m.claimValue) && mappingApplies(m, tenantId, providerTenant))
      .map((m) => m.role),
  ),
];

/**
 * The user's roles after a sign-in: the roles set by hand stay; the roles the mappings grant now are added; the roles
 * only an earlier sign-in's mappings granted, and that no mapping grants now, go. `mappedRoles` are those held only
 * through mappings (a role also set by hand is not one of them, so losing the claim does not remove it).
 */
export const decideRoles = (
  current: readonly string[],
  previouslyMapped: readonly string[],
  granted: readonly string[],
): { roles: string[]; mappedRoles: string[] } => {
  const manual = current.filter((r) => !previouslyMapped.includes(r));
  return {
    roles: [...new Set([...manual, ...granted])],
    mappedRoles: [...new Set(granted.filter((r) => !manual.includes(r)))],
  };
};

const roleGrants = async (deps: Pick<SsoDeps, 'roles'>, name: string) =>
  systemRole(name)?.permissions ?? (await deps.roles.findByName(name))?.permissions;

const claimString = (claims: IdTokenClaims, name: string): string | undefined => {
  const value = claims[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/** An email claim the provider asserts as verified (`email_verified: true`, or the string "true" some send). */
const verifiedEmail = (claims: IdTokenClaims, provider: IdentityProvider): string | undefined => {
  const email = claimString(claims, provider.emailClaim);
  const verified = claims['email_verified'] === true || claims['email_verified'] === 'true';
  return verified ? email : undefined;
};

const linkFor = (provider: IdentityProvider, subject: string): IdentityLink => ({
  providerId: provider.id,
  providerName: provider.name,
  subject,
});

/** Links an existing account by verified email, when the provider may and the account is not beyond its trust. */
const linkByEmail = async (
  deps: SsoDeps,
  provider: IdentityProvider,
  existing: User,
  subject: string,
): Promise<User> => {
  const refuse = (why: string) =>
    new ForbiddenError(`An account with this email exists and cannot be linked to this provider: ${why}.`, {
      reason: 'not_linkable',
    });
  if (existing.identityLink !== undefined && existing.identityLink !== null)
    throw refuse('it signs in with another identity');
  if (provider.tenantId !== null && existing.tenantId !== provider.tenantId) throw refuse('it is of another tenant');
  const ceiling = new Set(provider.trustCeiling);
  for (const role of existing.roles)
    for (const p of (await roleGrants(deps, role)) ?? [])
      if (!ceiling.has(p as Permission)) throw refuse('it holds permissions beyond what the provider was set up with');
  if (!(await deps.users.link(existing, linkFor(provider, subject), deps.clock.now())))
    throw new ConflictError('The account changed meanwhile; sign in again.');
  return (await deps.users.get(existing.id)) ?? existing;
};

/** A username for a new user: the provider's preferred_username or the email's local part, made unique if taken. */
const usernameCandidates = (claims: IdTokenClaims, email: string, random: TokenGenerator): string[] => {
  const base = (claimString(claims, 'preferred_username') ?? email.split('@')[0] ?? 'user')
    .replace(/[^A-Za-z0-9._-]/g, '')
    .slice(0, 50);
  const name = base === '' ? 'user' : base;
  return [
    name,
    `${name}-${random
      .random(4)
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '')}`,
  ];
};

const provision = async (
  deps: SsoDeps,
  provider: IdentityProvider,
  claims: IdTokenClaims,
  email: string,
): Promise<User> => {
  const now = deps.clock.now().toISOString();
  const verified = verifiedEmail(claims, provider) !== undefined;
  for (const username of usernameCandidates(claims, email, deps.random)) {
    const { id, shortId } = await deps.ids.next('user');
    const user: User = {
      id,
      shortId,
      email,
      username,
      displayName: claimString(claims, 'name') ?? null,
      status: 'active',
      roles: [],
      tenantId: provider.jitTenantId,
      passwordHash: null,
      twoFactor: { enabled: false, secret: null, lastStep: null },
      emailVerified: verified,
      tokensValidAfter: 0,
      revision: 0,
      createdAt: now,
      updatedAt: now,
      lastLoginAt: null,
      identityLink: linkFor(provider, claims.sub),
      mappedRoles: [],
    };
    try {
      await deps.users.create(user);
      return user;
    } catch (error) {
      const field = error instanceof ConflictError ? error.details?.['field'] : undefined;
      if (field !== 'username') throw error;
    }
  }
  throw new ConflictError('No free username could be found for the new account; sign in again.');
};

const resolveUser = async (deps: SsoDeps, provider: IdentityProvider, claims: IdTokenClaims): Promise<User> => {
  const linked = await deps.users.findByLink(provider.id, claims.sub);
  if (linked !== undefined) return linked;
  const email = claimString(claims, provider.emailClaim);
  const existing = email === undefined ? undefined : await deps.users.findByEmail(email);
  if (existing !== undefined) {
    if (provider.linkByEmail && verifiedEmail(claims, provider) !== undefined)
      return linkByEmail(deps, provider, existing, claims.sub);
    throw new ForbiddenError('An account with this email exists but is not linked to this identity provider.', {
      reason: 'not_linked',
    });
  }
  if (!provider.jitProvisioning)
    throw new ForbiddenError('No account is linked to this identity, and this provider does not create accounts.', {
      reason: 'not_provisioned',
    });
  if (email === undefined)
    throw new ForbiddenError(
      `The identity provider sent no '${provider.emailClaim}' claim to create the account with.`,
      {
        reason: 'no_email',
      },
    );
  // An account created with an address nobody proved would hold that address service-wide (emails are unique).
  if (verifiedEmail(claims, provider) === undefined && !provider.jitTrustUnverifiedEmail)
    throw new ForbiddenError(
      'No account is linked to this identity, and the identity provider does not assert its email as verified.',
      { reason: 'unverified_email' },
    );
  return provision(deps, provider, claims, email);
};

/**
 * The user may be signed in by the provider as read: still linked to this subject (an admin's move may have unlinked
 * it meanwhile), of a tenant provider's tenant (a link follows the user's current tenant: a user moved out of the
 * tenant, or made global, is not signed in whatever its link says), and active.
 */
const checkSignable = (provider: IdentityProvider, subject: string, user: User): void => {
  if (user.identityLink?.providerId !== provider.id || user.identityLink.subject !== subject)
    throw new ForbiddenError('This account is no longer linked to this identity provider.', { reason: 'not_linked' });
  if (provider.tenantId !== null && user.tenantId !== provider.tenantId)
    throw new ForbiddenError("This account is not of the identity provider's tenant: ask an administrator.", {
      reason: 'other_tenant',
    });
  if (user.status !== 'active')
    throw new InvalidCredentialsError(`This account is ${user.status}: ask an administrator.`);
};

/**
 * Applies the role mappings (retrying after a concurrent write to the user, which is checked again first); the user
 * as written.
 */
const applyMappings = async (deps: SsoDeps, provider: IdentityProvider, claims: IdTokenClaims, first: User) => {
  const mappings = await deps.providers.listMappings(provider.id);
  const groups = groupsOf(claims, provider.groupsClaim);
  let user = first;
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
    const granted: string[] = [];
    for (const role of rolesGranted(mappings, groups, user.tenantId, provider.tenantId))
      if ((await roleGrants(deps, role)) !== undefined) granted.push(role); // a role deleted since grants nothing
    const { roles, mappedRoles } = decideRoles(user.roles, user.mappedRoles ?? [], granted);
    const identityLink = linkFor(provider, claims.sub);
    const now = deps.clock.now();
    if (await deps.users.applySignIn(user, { roles, mappedRoles, identityLink }, now))
      return { ...user, roles, mappedRoles, identityLink, revision: user.revision + 1 };
    const again = await deps.users.get(user.id);
    if (again === undefined) break;
    checkSignable(provider, claims.sub, again);
    user = again;
  }
  throw new ConflictError('The account kept changing meanwhile; sign in again.');
};

/**
 * A provider's answer at the callback: an OAuth refusal of the code is the sign-in refused (401 INVALID_CREDENTIALS);
 * the provider failing (unreachable, a timeout, not 2xx, its keys not served) is EXTERNAL_SERVICE_ERROR (500), the
 * sentence guarded as every provider error is (never its status or body). Anything else passes through.
 */
const providerFailure = (error: unknown): unknown => {
  if (!(error instanceof ProviderRequestError)) return error;
  const message = `The identity provider did not complete the sign-in: ${error.message}`;
  return error.refusal ? new InvalidCredentialsError(message) : new ExternalServiceError(message, { cause: error });
};

export const completeSsoSignIn = async (deps: SsoDeps, command: CallbackCommand): Promise<SsoSignedIn> => {
  if (command.state === undefined || command.state === '')
    throw ValidationError.field('state', 'The sign-in answer carries no state.');
  const now = deps.clock.now();
  const started = await deps.states.consume(sha256Hex(command.state), now);
  if (started === undefined)
    throw new InvalidTokenError('This sign-in expired or was completed already: start it again.');
  const provider = await deps.providers.get(command.provider);
  if (provider === undefined || provider.id !== started.providerId)
    throw new InvalidTokenError('This sign-in was started with another identity provider.');
  if (command.binding === undefined || sha256Hex(command.binding) !== started.bindingHash)
    throw new InvalidTokenError('This sign-in was started in another browser: start it again here.');
  if (command.error !== undefined)
    throw new InvalidCredentialsError(`The identity provider did not sign you in (${command.error.slice(0, 100)}).`);
  if (command.code === undefined || command.code === '')
    throw ValidationError.field('code', 'The sign-in answer carries no authorization code.');
  if (!provider.enabled)
    throw new ForbiddenError('This identity provider is disabled.', { reason: 'provider_disabled' });

  let idToken: string;
  try {
    const secret = deps.cipher.decrypt(provider.clientSecret, secretContext(provider.id));
    ({ idToken } = await deps.oidc.exchangeCode(provider, secret, {
      code: command.code,
      codeVerifier: started.codeVerifier,
      redirectUri: redirectUriOf(deps.publicBaseUrl, provider.id),
    }));
  } catch (error) {
    throw providerFailure(error);
  }
  let claims: IdTokenClaims;
  try {
    claims = await deps.oidc.verifyIdToken(provider, idToken, now);
  } catch (error) {
    throw providerFailure(error);
  }
  if (claims['nonce'] !== started.nonce)
    throw new InvalidTokenError('The ID token was not issued for this sign-in (nonce).');

  const user = await resolveUser(deps, provider, claims);
  checkSignable(provider, claims.sub, user);
  return { user: await applyMappings(deps, provider, claims, user), provider, returnTo: started.returnTo };
};

export type SsoSessionOutcome =
  ({ readonly kind: 'session' } & StartedSession) | { readonly kind: 'two_factor'; readonly pendingToken: string };

/**
 * Completes an SSO sign-in like a password login: a session (access token, refresh token). A user with two-factor
 * authentication is asked for a code (a pending token, as login answers) unless the provider is trusted for it.
 */
export const ssoSession = async (deps: IdentityDeps, signedIn: SsoSignedIn): Promise<SsoSessionOutcome> => {
  const { user, provider } = signedIn;
  if (user.twoFactor.enabled && !provider.trustedFor2fa) {
    const pendingToken = await deps.tokens.issue(
      { type: 'two_factor_pending', userId: user.id, tenantId: user.tenantId, issuedAt: deps.clock.now().getTime() },
      deps.settings.twoFactorPendingTtlSeconds,
    );
    return { kind: 'two_factor', pendingToken };
  }
  return { kind: 'session', ...(await startSession(deps, user)) };
};
