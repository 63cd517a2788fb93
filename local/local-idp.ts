// `npm start -- --with-idp`: a small OpenID provider on loopback (local/oidc-provider.ts) with a few users and
// groups, registered on the stack as the identity provider "Local SSO" (just-in-time provisioning, deployers ->
// operator, admins -> admin), so single sign-on and role mappings can be tried in two minutes. For this machine only:
// the users' passwords are printed and, like the client secret, fixed.
import { personName } from '../domain/identity/names.js';
import type { Caller, User } from '../domain/identity/types.js';
import { startOidcProvider, type OidcPasswordUser, type OidcProvider } from './oidc-provider.js';

export const LOCAL_IDP_NAME = 'Local SSO';
export const LOCAL_IDP_CLIENT = { clientId: 'deployer-local', clientSecret: 'local-sso-client-secret' } as const;

export const LOCAL_IDP_USERS: readonly OidcPasswordUser[] = [
  {
    sub: 'local-alice',
    email: 'alice@example.com',
    email_verified: true,
    name: 'Alice Example',
    groups: ['deployers'],
    password: 'alice-password',
  },
  {
    sub: 'local-bob',
    email: 'bob@example.com',
    email_verified: true,
    name: 'Bob Example',
    groups: ['admins'],
    password: 'bob-password',
  },
  {
    sub: 'local-carol',
    email: 'carol@example.com',
    email_verified: true,
    name: 'Carol Example',
    groups: [],
    password: 'carol-password',
  },
];

/** Group -> role: what the provider's role mappings grant. */
export const LOCAL_IDP_MAPPINGS: readonly { readonly claim_value: string; readonly role: string }[] = [
  { claim_value: 'deployers', role: 'operator' },
  { claim_value: 'admins', role: 'admin' },
];

/** Starts the provider; its host must be in the stack's OIDC_ALLOWED_HOSTS (it is on loopback, over http). */
export const startLocalOidcProvider = (port = 0): Promise<OidcProvider> =>
  startOidcProvider(LOCAL_IDP_CLIENT, { users: LOCAL_IDP_USERS, port, title: LOCAL_IDP_NAME });

/** The first admin (or another global admin) the provider is registered as: its creator in the records. */
const registrar = async (adminEmail: string | undefined): Promise<Caller> => {
  const { identityDeps } = await import('../functions/shared/identity-wiring.js');
  const users = identityDeps().users;
  const byEmail = adminEmail === undefined ? undefined : await users.findByEmail(adminEmail);
  const isAdmin = (u: User | undefined): u is User =>
    u !== undefined && u.status === 'active' && u.tenantId === null && u.roles.includes('admin');
  const admin = isAdmin(byEmail)
    ? byEmail
    : (await (await import('../functions/shared/sso-wiring.js')).providersDeps().users.listAll()).find(isAdmin);
  if (admin === undefined) throw new Error('no active global admin to register it as');
  // The caller the admin's own session would be (authenticate.ts): what the roles grant now, nothing more.
  return {
    kind: 'user',
    userId: admin.id,
    userName: personName(admin),
    tenantId: null,
    roles: admin.roles,
    permissions: await identityDeps().roles.permissionsOf(admin.roles),
  };
};

/**
 * Creates "Local SSO" on the stack (in this process: the stack's configuration is in process.env), or points the one
 * kept from an earlier start at this provider (its port changes from start to start), and adds the missing mappings.
 * Through the same use cases as the admin API, so the discovery check and every rule apply.
 */
export const registerLocalIdp = async (provider: OidcProvider, adminEmail: string | undefined): Promise<string> => {
  const sso = await import('../domain/sso/providers.js');
  const mappingCases = await import('../domain/sso/role-mappings.js');
  const { providersDeps } = await import('../functions/shared/sso-wiring.js');
  const deps = providersDeps();
  const caller = await registrar(adminEmail);
  const settings = {
    ...provider.endpoints('local'),
    client_id: LOCAL_IDP_CLIENT.clientId,
    client_secret: LOCAL_IDP_CLIENT.clientSecret,
    scopes: ['openid', 'email', 'profile', 'groups'],
    jit_provisioning: true,
    enabled: true,
  };
  const existing = (await deps.providers.list(null)).find((p) => p.name === LOCAL_IDP_NAME);
  const id =
    existing === undefined
      ? (await sso.createProvider(deps, caller, { name: LOCAL_IDP_NAME, ...settings })).id
      : (await sso.updateProvider(deps, caller, existing.id, settings)).id;
  const mappings = await mappingCases.listMappings(deps, caller, id);
  for (const wanted of LOCAL_IDP_MAPPINGS)
    if (!mappings.some((m) => m.claim_value === wanted.claim_value && m.role === wanted.role))
      await mappingCases.createMapping(deps, caller, id, wanted);
  return id;
};

/**
 * A start without `--with-idp` over data kept from one with it: "Local SSO" points at a provider that no longer runs,
 * so its "Sign in with" button would lead nowhere. Disables it (kept, with its mappings and linked users, for the next
 * `--with-idp` start, which enables it again). Only the one this file registered (its client id). The banner line,
 * or undefined when there was nothing to disable.
 */
export const disableLocalIdp = async (adminEmail: string | undefined): Promise<string | undefined> => {
  const { providersDeps } = await import('../functions/shared/sso-wiring.js');
  const deps = providersDeps();
  const kept = (await deps.providers.list(null)).find(
    (p) => p.name === LOCAL_IDP_NAME && p.clientId === LOCAL_IDP_CLIENT.clientId && p.enabled,
  );
  if (kept === undefined) return undefined;
  const sso = await import('../domain/sso/providers.js');
  await sso.updateProvider(deps, await registrar(adminEmail), kept.id, { enabled: false });
  return `  Local SSO       disabled (kept from a --with-idp start, whose provider is not running; npm start -- --with-idp enables it)`;
};

/** The banner's lines: how to try it. */
export const localIdpBanner = (provider: OidcProvider): string[] => [
  `  Local SSO       ${provider.issuer}/realms/local   (npm start -- --with-idp: an OpenID provider for trying SSO)`,
  `                  On the console's sign-in page choose "Sign in with ${LOCAL_IDP_NAME}", then one of:`,
  ...LOCAL_IDP_USERS.map((u) => {
    const roles = (u.groups ?? []).flatMap((g) => LOCAL_IDP_MAPPINGS.filter((m) => m.claim_value === g));
    const gets =
      roles.length === 0
        ? 'in no group: signs in with no role until an admin gives one'
        : roles.map((m) => `${m.claim_value} -> ${m.role}`);
    return `                    ${u.email} / ${u.password}   (${typeof gets === 'string' ? gets : gets.join(', ')})`;
  }),
  '                  Accounts are created at first sign-in; the roles follow the groups at every sign-in.',
];
