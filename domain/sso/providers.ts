// Admin: identity providers (api.md "Admin: identity providers"; shapes in docs/decisions.md
// "Single sign-on"). Tenancy as OAuth clients: a provider belongs to its creator's tenant (null for a global creator)
// and is seen only by callers of that tenant and global ones (others: 404). The client secret is stored encrypted
// (context `idp:<id>`) and answered as `***`. Role mappings are in role-mappings.ts, discovery and the connection
// test in provider-checks.ts.
// Nobody hands out what they do not hold: a role mapping grants a role only when the caller holds every permission
// of that role (403 INSUFFICIENT_PERMISSIONS), and a mapping granting more than the caller holds is not theirs to
// change. A provider is a way into every account linked to it and every role it maps to, so changing it (issuer,
// client, endpoints, anything) needs the caller to hold all of that (403); the caller's permissions then become the
// provider's trust ceiling, above which linking by email never takes over an account.
// The stored client secret goes only where it was given for: changing the token endpoint (where it is sent) or the
// issuer (whose client it is) needs it again in the same request (400 on client_secret), so a changed destination
// never receives the old secret. Provisioning accounts for unverified emails is a service-wide trust (emails are
// unique across tenants): only a global caller turns it on. A tenant provider's mappings are of its tenant.
import { ConflictError, NotFoundError, ValidationError, type FieldProblem } from '../errors.js';
import { ForbiddenError, InsufficientPermissionsError } from '../identity/errors.js';
import type { RoleRepository, SecretCipher, UserDirectory } from '../identity/ports.js';
import type { Caller, User } from '../identity/types.js';
import { pageOf, type PageRequest } from '../shared/pagination.js';
import type { TenantLookup } from '../shared/lookups.js';
import type { Clock, IdGenerator } from '../shared/ports.js';
import { grantsOf, missingFrom } from './grants.js';
import { ProviderRequestError, type IdentityProviderRepository, type OidcGateway } from './ports.js';
import type { IdentityProvider, IdTokenAlgorithm, TokenAuthMethod } from './types.js';

export const SECRET_PLACEHOLDER = '***';
export interface ProvidersDeps {
  readonly providers: IdentityProviderRepository;
  readonly roles: Pick<RoleRepository, 'findByName'>;
  readonly users: Pick<UserDirectory, 'listAll'>;
  readonly tenants: TenantLookup;
  readonly cipher: SecretCipher;
  readonly oidc: OidcGateway;
  readonly ids: IdGenerator;
  readonly clock: Clock;
  /** The service's public base URL (no trailing slash): the redirect URI registered at the provider starts with it. */
  readonly publicBaseUrl: string;
  /** Why a provider URL is refused (https, or http only to a configured host), or undefined when it is fine. */
  readonly endpointProblem: (url: string) => string | undefined;
}

export const secretContext = (providerId: string): string => `idp:${providerId}`;

/** Where the provider sends the browser back: register exactly this at the provider. */
export const redirectUriOf = (baseUrl: string, providerId: string): string =>
  `${baseUrl}/api/v1/auth/sso/${providerId}/callback`;

export const providerView = (p: IdentityProvider, baseUrl: string) => ({
  id: p.id,
  short_id: p.shortId,
  name: p.name,
  type: p.type,
  issuer: p.issuer,
  client_id: p.clientId,
  client_secret: SECRET_PLACEHOLDER,
  token_endpoint_auth_method: p.tokenAuthMethod,
  scopes: [...p.scopes],
  authorization_endpoint: p.authorizationEndpoint,
  token_endpoint: p.tokenEndpoint,
  userinfo_endpoint: p.userinfoEndpoint,
  jwks_uri: p.jwksUri,
  id_token_signing_alg_values: [...p.idTokenAlgorithms],
  email_claim: p.emailClaim,
  groups_claim: p.groupsClaim,
  jit_provisioning: p.jitProvisioning,
  jit_tenant_id: p.jitTenantId,
  jit_trust_unverified_email: p.jitTrustUnverifiedEmail,
  link_by_email: p.linkByEmail,
  trusted_for_2fa: p.trustedFor2fa,
  enabled: p.enabled,
  tenant_id: p.tenantId,
  redirect_uri: redirectUriOf(baseUrl, p.id),
  sign_in_url: `${baseUrl}/api/v1/auth/sso/${p.id}`,
  linked_users: p.linkedUsers,
  created_by: p.createdBy,
  created_at: p.createdAt,
  updated_at: p.updatedAt,
});

/**
 * The providers a sign-in page may offer, for anyone (no credential): every enabled provider of every tenant (the page
 * cannot know the visitor's tenant before the sign-in), names and the link only. The OAuth sign-in page
 * (`GET /oauth/authorize`) already shows these names to anyone; the issuer, client id and settings stay admin-only.
 */
export const listSignInProviders = async (deps: Pick<ProvidersDeps, 'providers' | 'publicBaseUrl'>) =>
  (await deps.providers.list('all'))
    .filter((p) => p.enabled)
    .map((p) => ({
      id: p.id,
      short_id: p.shortId,
      name: p.name,
      sign_in_url: `${deps.publicBaseUrl}/api/v1/auth/sso/${p.id}`,
    }));

const visible = (caller: Caller, p: IdentityProvider): boolean =>
  caller.tenantId === null || p.tenantId === caller.tenantId;

export const findProvider = async (
  deps: Pick<ProvidersDeps, 'providers'>,
  caller: Caller,
  id: string,
): Promise<IdentityProvider> => {
  const provider = await deps.providers.get(id);
  if (provider === undefined || !visible(caller, provider)) throw new NotFoundError('Identity provider', id);
  return provider;
};

/** Everything a provider opens: its mappings' roles and the accounts linked to it; the caller must hold all of it. */
const checkProviderWithinCaller = async (deps: ProvidersDeps, caller: Caller, p: IdentityProvider): Promise<void> => {
  const mappings = await deps.providers.listMappings(p.id);
  const linked = p.linkedUsers === 0 ? [] : (await deps.users.listAll()).filter(isLinkedTo(p.id));
  const opens = await grantsOf(deps, [...mappings.map((m) => m.role), ...linked.flatMap((u) => u.roles)]);
  const missing = missingFrom(caller, opens);
  if (missing.length > 0) throw new InsufficientPermissionsError(missing);
};

const isLinkedTo = (providerId: string) => (u: User) => u.identityLink?.providerId === providerId;

/** The issuer as compared with `iss`: no trailing slash. */
export const normalizeIssuer = (issuer: string): string => issuer.replace(/\/+$/, '');

export interface ProviderSettings {
  readonly name: string;
  readonly issuer: string;
  readonly client_id: string;
  readonly token_endpoint_auth_method?: TokenAuthMethod | undefined;
  readonly scopes?: readonly string[] | undefined;
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly userinfo_endpoint?: string | null | undefined;
  readonly jwks_uri: string;
  readonly id_token_signing_alg_values?: readonly IdTokenAlgorithm[] | undefined;
  readonly email_claim?: string | undefined;
  readonly groups_claim?: string | undefined;
  readonly jit_provisioning?: boolean | undefined;
  readonly jit_tenant_id?: string | null | undefined;
  readonly jit_trust_unverified_email?: boolean | undefined;
  readonly link_by_email?: boolean | undefined;
  readonly trusted_for_2fa?: boolean | undefined;
  readonly enabled?: boolean | undefined;
}

export interface CreateProviderCommand extends ProviderSettings {
  readonly client_secret: string;
}

export type UpdateProviderCommand = Partial<CreateProviderCommand>;

const DEFAULT_SCOPES = ['openid', 'email', 'profile'];

/**
 * A provider that cannot be reached would put a dead "Sign in with ..." button on every sign-in page: its discovery
 * document must answer now, as a JSON OpenID Connect document naming its issuer (one guarded request, the OIDC
 * deadline). 400 on `issuer` saying why (does not resolve, refused the connection, no answer in time, not JSON, another
 * issuer...), nothing stored.
 */
const lowerFirst = (text: string): string => text.charAt(0).toLowerCase() + text.slice(1);

const checkReachable = async (deps: ProvidersDeps, issuer: string): Promise<void> => {
  try {
    await deps.oidc.discover(issuer);
  } catch (error) {
    if (error instanceof ProviderRequestError)
      throw ValidationError.field(
        'issuer',
        `Could not read ${issuer}/.well-known/openid-configuration: ${lowerFirst(error.message)}`,
      );
    throw error;
  }
};

const checkUrls = (deps: ProvidersDeps, p: IdentityProvider): void => {
  const problems: FieldProblem[] = [];
  const urls: [string, string | null][] = [
    ['issuer', p.issuer],
    ['authorization_endpoint', p.authorizationEndpoint],
    ['token_endpoint', p.tokenEndpoint],
    ['userinfo_endpoint', p.userinfoEndpoint],
    ['jwks_uri', p.jwksUri],
  ];
  for (const [field, url] of urls) {
    if (url === null) continue;
    const problem = deps.endpointProblem(url);
    if (problem !== undefined) problems.push({ field, code: 'VALIDATION_ERROR', message: problem });
  }
  if (!p.scopes.includes('openid'))
    problems.push({ field: 'scopes', code: 'VALIDATION_ERROR', message: "must include 'openid'" });
  if (problems.length > 0) throw new ValidationError(problems[0]!.message, problems);
};

/** The tenant new users are provisioned into: a tenant provider's own; a global provider's, an existing tenant. */
const jitTenant = async (
  deps: ProvidersDeps,
  providerTenant: string | null,
  requested: string | null | undefined,
  current: string | null,
): Promise<string | null> => {
  if (providerTenant !== null) {
    if (requested !== undefined && requested !== null && requested !== providerTenant)
      throw new ForbiddenError('A provider of a tenant provisions users only into that tenant.', {
        reason: 'tenant_restriction',
      });
    return providerTenant;
  }
  if (requested === undefined) return current;
  if (requested === null) return null;
  const tenant = await deps.tenants.findTenant(requested);
  if (tenant === undefined) throw ValidationError.field('jit_tenant_id', 'The tenant does not exist.');
  return tenant.id;
};

/** Only a global caller trusts a provider's unverified emails: an account it creates holds its email service-wide. */
const checkTrustUnverified = (caller: Caller, turnsOn: boolean): void => {
  if (turnsOn && caller.tenantId !== null)
    throw new ForbiddenError(
      'Provisioning accounts for unverified emails affects every tenant: only global administrators turn it on.',
      { reason: 'tenant_restriction' },
    );
};

/** The settings that say who the provider is: a trust granted to one provider does not follow a change of them. */
const IDENTITY_FIELDS = [
  'issuer',
  'clientId',
  'authorizationEndpoint',
  'tokenEndpoint',
  'userinfoEndpoint',
  'jwksUri',
] as const satisfies readonly (keyof IdentityProvider)[];

/** Where the stored client secret is sent (the token endpoint) and whose client it is (the issuer). */
const SECRET_DESTINATION_FIELDS = ['issuer', 'tokenEndpoint'] as const satisfies readonly (keyof IdentityProvider)[];

const fieldName = (field: keyof IdentityProvider): string => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

const changed = (previous: IdentityProvider, next: IdentityProvider, fields: readonly (keyof IdentityProvider)[]) =>
  fields.filter((f) => previous[f] !== next[f]);

export const listProviders = async (deps: ProvidersDeps, caller: Caller, page: PageRequest) => {
  const all = await deps.providers.list(caller.tenantId ?? 'all');
  const result = pageOf(all, page);
  return { data: result.data.map((p) => providerView(p, deps.publicBaseUrl)), meta: result.meta };
};

export const getProvider = async (deps: ProvidersDeps, caller: Caller, id: string) =>
  providerView(await findProvider(deps, caller, id), deps.publicBaseUrl);

export const createProvider = async (deps: ProvidersDeps, caller: Caller, command: CreateProviderCommand) => {
  const { id, shortId } = await deps.ids.next('identity_provider');
  const at = deps.clock.now().toISOString();
  const tenantId = caller.tenantId;
  const provider: IdentityProvider = {
    id,
    shortId,
    name: command.name,
    type: 'oidc',
    issuer: normalizeIssuer(command.issuer),
    clientId: command.client_id,
    clientSecret: deps.cipher.encrypt(command.client_secret, secretContext(id)),
    tokenAuthMethod: command.token_endpoint_auth_method ?? 'client_secret_basic',
    scopes: [...new Set(command.scopes ?? DEFAULT_SCOPES)],
    authorizationEndpoint: command.authorization_endpoint,
    tokenEndpoint: command.token_endpoint,
    userinfoEndpoint: command.userinfo_endpoint ?? null,
    jwksUri: command.jwks_uri,
    idTokenAlgorithms: [...new Set<IdTokenAlgorithm>(command.id_token_signing_alg_values ?? ['RS256'])],
    emailClaim: command.email_claim ?? 'email',
    groupsClaim: command.groups_claim ?? 'groups',
    jitProvisioning: command.jit_provisioning ?? false,
    jitTenantId: await jitTenant(deps, tenantId, command.jit_tenant_id, null),
    jitTrustUnverifiedEmail: command.jit_trust_unverified_email ?? false,
    linkByEmail: command.link_by_email ?? false,
    trustedFor2fa: command.trusted_for_2fa ?? false,
    enabled: command.enabled ?? true,
    tenantId,
    trustCeiling: [...caller.permissions].sort(),
    createdBy: caller.userId,
    createdAt: at,
    updatedAt: at,
    linkedUsers: 0,
    revision: 1,
  };
  checkUrls(deps, provider);
  checkTrustUnverified(caller, provider.jitTrustUnverifiedEmail);
  await checkReachable(deps, provider.issuer);
  await deps.providers.create(provider);
  return providerView(provider, deps.publicBaseUrl);
};

export const updateProvider = async (
  deps: ProvidersDeps,
  caller: Caller,
  id: string,
  command: UpdateProviderCommand,
) => {
  const provider = await findProvider(deps, caller, id);
  await checkProviderWithinCaller(deps, caller, provider);
  const secret = command.client_secret;
  const secretGiven = secret !== undefined && secret !== SECRET_PLACEHOLDER;
  const next: IdentityProvider = {
    ...provider,
    ...(command.name === undefined ? {} : { name: command.name }),
    ...(command.issuer === undefined ? {} : { issuer: normalizeIssuer(command.issuer) }),
    ...(command.client_id === undefined ? {} : { clientId: command.client_id }),
    ...(secretGiven ? { clientSecret: deps.cipher.encrypt(secret, secretContext(provider.id)) } : {}),
    ...(command.token_endpoint_auth_method === undefined
      ? {}
      : { tokenAuthMethod: command.token_endpoint_auth_method }),
    ...(command.scopes === undefined ? {} : { scopes: [...new Set(command.scopes)] }),
    ...(command.authorization_endpoint === undefined ? {} : { authorizationEndpoint: command.authorization_endpoint }),
    ...(command.token_endpoint === undefined ? {} : { tokenEndpoint: command.token_endpoint }),
    ...(command.userinfo_endpoint === undefined ? {} : { userinfoEndpoint: command.userinfo_endpoint }),
    ...(command.jwks_uri === undefined ? {} : { jwksUri: command.jwks_uri }),
    ...(command.id_token_signing_alg_values === undefined
      ? {}
      : { idTokenAlgorithms: [...new Set(command.id_token_signing_alg_values)] }),
    ...(command.email_claim === undefined ? {} : { emailClaim: command.email_claim }),
    ...(command.groups_claim === undefined ? {} : { groupsClaim: command.groups_claim }),
    ...(command.jit_provisioning === undefined ? {} : { jitProvisioning: command.jit_provisioning }),
    jitTenantId: await jitTenant(deps, provider.tenantId, command.jit_tenant_id, provider.jitTenantId),
    ...(command.jit_trust_unverified_email === undefined
      ? {}
      : { jitTrustUnverifiedEmail: command.jit_trust_unverified_email }),
    ...(command.link_by_email === undefined ? {} : { linkByEmail: command.link_by_email }),
    ...(command.trusted_for_2fa === undefined ? {} : { trustedFor2fa: command.trusted_for_2fa }),
    ...(command.enabled === undefined ? {} : { enabled: command.enabled }),
    trustCeiling: [...caller.permissions].sort(),
    updatedAt: deps.clock.now().toISOString(),
    revision: provider.revision + 1,
  };
  checkUrls(deps, next);
  const moved = changed(provider, next, SECRET_DESTINATION_FIELDS);
  if (moved.length > 0 && !secretGiven)
    throw ValidationError.field(
      'client_secret',
      `must be given again when ${moved.map(fieldName).join(' or ')} changes: the stored secret is not sent to a new destination`,
    );
  // The trust in unverified emails is given by a global administrator to one provider: a tenant-scoped caller may
  // keep it as it is (a PUT repeating it), not turn it on, and loses it by changing who the provider is.
  const reidentified = changed(provider, next, IDENTITY_FIELDS).length > 0;
  checkTrustUnverified(
    caller,
    command.jit_trust_unverified_email === true && (!provider.jitTrustUnverifiedEmail || reidentified),
  );
  const untrusted = caller.tenantId !== null && reidentified ? { ...next, jitTrustUnverifiedEmail: false } : next;
  if (next.issuer !== provider.issuer) await checkReachable(deps, next.issuer);
  await deps.providers.update(provider, untrusted);
  return providerView(untrusted, deps.publicBaseUrl);
};

/** 409 while users are linked (unlink them by deleting them, or keep the provider disabled). */
export const deleteProvider = async (deps: ProvidersDeps, caller: Caller, id: string): Promise<void> => {
  const provider = await findProvider(deps, caller, id);
  if (provider.linkedUsers > 0)
    throw new ConflictError('Users are linked to this identity provider: disable it instead, or remove them first.', {
      reason: 'linked_users',
      linked_users: provider.linkedUsers,
    });
  await deps.providers.delete(provider);
};
