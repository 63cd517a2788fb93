// Admin: OAuth 2.0 clients (api.md; shapes in decisions.md section 9). A client belongs to its creator's tenant and
// is seen only by callers of that tenant (and global ones); its scopes never go beyond what the caller setting them
// holds; its secret is a random 256-bit token shown once (create, rotate) and stored as a SHA-256 hash; DELETE only
// deactivates it. Its client-credentials tokens act for its creator, so only the creator (or someone acting with every
// role of the creator, in the same scope) re-keys it or points it elsewhere.
import type { Clock, IdGenerator } from '../shared/ports.js';
import { ConflictError, NotFoundError, ValidationError, type FieldProblem } from '../errors.js';
import { ForbiddenError, InsufficientPermissionsError } from '../identity/errors.js';
import { isPermission, type Permission } from '../identity/permissions.js';
import { actsWithEveryRoleOf, ADMIN_ROLE } from '../identity/delegation.js';
import type { TokenGenerator, UserRepository } from '../identity/ports.js';
import type { Caller } from '../identity/types.js';
import type { OAuthClientRepository } from './ports.js';
import type { GrantType, OAuthClient, OAuthClientChanges } from './types.js';

export const CLIENT_ID_PREFIX = 'dplc_';
export const CLIENT_SECRET_PREFIX = 'dplcs_';

export interface OAuthClientsDeps {
  readonly clients: OAuthClientRepository;
  /** Reads a client's creator: who may re-key it or point it elsewhere depends on the creator's current roles. */
  readonly users: Pick<UserRepository, 'get'>;
  readonly ids: IdGenerator;
  readonly clock: Clock;
  readonly random: TokenGenerator;
}

export interface OAuthClientView {
  readonly id: string;
  readonly short_id: string;
  readonly client_id: string;
  readonly name: string;
  readonly description: string | null;
  readonly redirect_uris: readonly string[];
  readonly grant_types: readonly GrantType[];
  readonly scopes: readonly string[];
  readonly is_confidential: boolean;
  readonly is_active: boolean;
  readonly tenant_id: string | null;
  readonly created_by: string;
  readonly created_at: string;
  readonly updated_at: string;
}

export const clientView = (c: OAuthClient): OAuthClientView => ({
  id: c.id,
  short_id: c.shortId,
  client_id: c.clientId,
  name: c.name,
  description: c.description,
  redirect_uris: [...c.redirectUris],
  grant_types: [...c.grantTypes],
  scopes: [...c.scopes],
  is_confidential: c.isConfidential,
  is_active: c.isActive,
  tenant_id: c.tenantId,
  created_by: c.createdBy,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
});

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Why a redirect URI is refused, or undefined when it is fine: an absolute https URL without a fragment (RFC 6749
 * 3.1.2), or http to a loopback address (RFC 8252 7.3, native apps); no wildcards, compared exactly.
 */
export const redirectUriProblem = (uri: string): string | undefined => {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.hash !== '' || uri.includes('#')) return 'must not have a fragment';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return 'must use https (http only to 127.0.0.1, [::1] or localhost)';
};

interface ClientSettings {
  readonly redirectUris: readonly string[];
  readonly grantTypes: readonly GrantType[];
  readonly scopes: readonly string[];
  readonly isConfidential: boolean;
}

/** The rules between fields, as field problems: what a client with these settings could not do. */
const settingsProblems = (s: ClientSettings) => {
  const problems: FieldProblem[] = [];
  s.redirectUris.forEach((uri, i) => {
    const problem = redirectUriProblem(uri);
    if (problem !== undefined)
      problems.push({ field: `redirect_uris.${i}`, code: 'VALIDATION_ERROR', message: problem });
  });
  s.scopes.forEach((scope, i) => {
    if (!isPermission(scope))
      problems.push({ field: `scopes.${i}`, code: 'VALIDATION_ERROR', message: `'${scope}' is not a permission.` });
  });
  if (s.grantTypes.includes('authorization_code') && s.redirectUris.length === 0)
    problems.push({
      field: 'redirect_uris',
      code: 'VALIDATION_ERROR',
      message: 'the authorization_code grant needs at least one redirect URI',
    });
  if (s.grantTypes.includes('refresh_token') && !s.grantTypes.includes('authorization_code'))
    problems.push({
      field: 'grant_types',
      code: 'VALIDATION_ERROR',
      message: 'refresh_token comes only with authorization_code (client_credentials issues no refresh tokens)',
    });
  if (s.grantTypes.includes('client_credentials') && !s.isConfidential)
    problems.push({
      field: 'grant_types',
      code: 'VALIDATION_ERROR',
      message: 'a public client cannot use client_credentials: it has no secret to authenticate with',
    });
  return problems;
};

const checkSettings = (caller: Caller, s: ClientSettings): void => {
  const problems = settingsProblems(s);
  if (problems.length > 0) throw new ValidationError(problems[0]!.message, problems);
  // A client can never be given what the caller does not hold (the API keys' rule).
  const wider = s.scopes.filter((scope) => !caller.permissions.has(scope as Permission));
  if (wider.length > 0) throw new InsufficientPermissionsError(wider);
};

const visible = (caller: Caller, client: OAuthClient): boolean =>
  caller.tenantId === null || client.tenantId === caller.tenantId;

const find = async (deps: Pick<OAuthClientsDeps, 'clients'>, caller: Caller, id: string): Promise<OAuthClient> => {
  const client = await deps.clients.get(id);
  if (client === undefined || !visible(caller, client)) throw new NotFoundError('OAuth client', id);
  return client;
};

/**
 * A client whose scopes go beyond the caller's is not the caller's to change or to get a secret of: its tokens act for
 * its creator within those scopes, so rotating its secret (or pointing its redirect URIs elsewhere) would hand the
 * caller what they do not hold. Deactivating it takes nothing and stays allowed.
 */
const checkWithinCaller = (caller: Caller, client: OAuthClient): void => {
  const wider = client.scopes.filter((scope) => !caller.permissions.has(scope));
  if (wider.length > 0) throw new InsufficientPermissionsError(wider);
};

/**
 * What hands over what a client's tokens act with (its client-credentials tokens act for its creator): rotating its
 * secret, adding grant types or scopes, changing its redirect URIs. Only its creator, or a caller who acts with every
 * current role of the creator in the same scope (actsWithEveryRoleOf), may do it; 403 FORBIDDEN
 * `client_creator_required` for anyone else. A creator who no longer exists is stood in for by an admin of the
 * client's scope. Renaming, the description, narrowing and deactivating take nothing and stay open.
 */
const checkStandsInForCreator = async (
  deps: Pick<OAuthClientsDeps, 'users'>,
  caller: Caller,
  client: OAuthClient,
  what: string,
): Promise<void> => {
  const creator = await deps.users.get(client.createdBy);
  const owner = creator ?? { id: client.createdBy, tenantId: client.tenantId, roles: [ADMIN_ROLE] };
  if (actsWithEveryRoleOf(caller, owner)) return;
  throw new ForbiddenError(
    `Only the client's creator, or someone acting with every role the creator holds in the same scope, may ${what}: its tokens act for the creator.`,
    { reason: 'client_creator_required' },
  );
};

/** What of an update hands the client over (see checkStandsInForCreator), in words; undefined: nothing. */
const handingOver = (client: OAuthClient, changes: OAuthClientChanges): string | undefined => {
  const added = <T>(before: readonly T[], after: readonly T[] | undefined) =>
    after !== undefined && after.some((x) => !before.includes(x));
  const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));
  if (changes.redirectUris !== undefined && !same(client.redirectUris, changes.redirectUris))
    return 'change its redirect URIs';
  if (added(client.grantTypes, changes.grantTypes)) return 'add grant types';
  if (added(client.scopes, changes.scopes)) return 'add scopes';
  return undefined;
};

const newSecret = (random: TokenGenerator) => {
  const secret = `${CLIENT_SECRET_PREFIX}${random.random(32)}`;
  return { secret, hash: random.hash(secret) };
};

export interface CreateClientCommand {
  readonly name: string;
  readonly description?: string | undefined;
  readonly redirect_uris: readonly string[];
  readonly grant_types: readonly GrantType[];
  readonly scopes: readonly string[];
  readonly is_confidential?: boolean | undefined;
}

export const createClient = async (deps: OAuthClientsDeps, caller: Caller, command: CreateClientCommand) => {
  const settings: ClientSettings = {
    redirectUris: [...new Set(command.redirect_uris)],
    grantTypes: [...new Set(command.grant_types)],
    scopes: [...new Set(command.scopes)],
    isConfidential: command.is_confidential ?? true,
  };
  checkSettings(caller, settings);
  const at = deps.clock.now().toISOString();
  const { id, shortId } = await deps.ids.next('oauth_client');
  const secret = settings.isConfidential ? newSecret(deps.random) : undefined;
  const client: OAuthClient = {
    id,
    shortId,
    clientId: `${CLIENT_ID_PREFIX}${deps.random.random(16)}`,
    name: command.name,
    description: command.description ?? null,
    redirectUris: settings.redirectUris,
    grantTypes: settings.grantTypes,
    scopes: settings.scopes as Permission[],
    isConfidential: settings.isConfidential,
    secretHash: secret?.hash ?? null,
    isActive: true,
    tenantId: caller.tenantId,
    createdBy: caller.userId,
    createdAt: at,
    updatedAt: at,
    revision: 1,
  };
  await deps.clients.create(client);
  return { ...clientView(client), client_secret: secret?.secret ?? null };
};

export const listClients = async (deps: Pick<OAuthClientsDeps, 'clients'>, caller: Caller) =>
  (await deps.clients.list(caller.tenantId ?? 'all')).map(clientView);

export const getClient = async (deps: Pick<OAuthClientsDeps, 'clients'>, caller: Caller, id: string) =>
  clientView(await find(deps, caller, id));

export interface UpdateClientCommand {
  readonly name?: string | undefined;
  readonly description?: string | null | undefined;
  readonly redirect_uris?: readonly string[] | undefined;
  readonly grant_types?: readonly GrantType[] | undefined;
  readonly scopes?: readonly string[] | undefined;
}

export const updateClient = async (
  deps: OAuthClientsDeps,
  caller: Caller,
  id: string,
  command: UpdateClientCommand,
) => {
  const client = await find(deps, caller, id);
  checkWithinCaller(caller, client);
  const changes: OAuthClientChanges = {
    ...(command.name === undefined ? {} : { name: command.name }),
    ...(command.description === undefined ? {} : { description: command.description }),
    ...(command.redirect_uris === undefined ? {} : { redirectUris: [...new Set(command.redirect_uris)] }),
    ...(command.grant_types === undefined ? {} : { grantTypes: [...new Set(command.grant_types)] }),
    ...(command.scopes === undefined ? {} : { scopes: [...new Set(command.scopes)] as Permission[] }),
  };
  const handedOver = handingOver(client, changes);
  if (handedOver !== undefined) await checkStandsInForCreator(deps, caller, client, handedOver);
  const next = { ...client, ...changes };
  // Checked as a whole (a grant type needs its redirect URIs); only scopes being set must be within the caller's.
  const problems = settingsProblems(next);
  if (problems.length > 0) throw new ValidationError(problems[0]!.message, problems);
  if (changes.scopes !== undefined) checkSettings(caller, next);
  const updated = await deps.clients.update(client, changes, deps.clock.now().toISOString());
  if (updated === undefined) throw new ConflictError('The client changed meanwhile; read it again and retry.');
  return clientView(updated);
};

export const deactivateClient = async (deps: OAuthClientsDeps, caller: Caller, id: string): Promise<void> => {
  const client = await find(deps, caller, id);
  if (!client.isActive) return;
  const updated = await deps.clients.update(client, { isActive: false }, deps.clock.now().toISOString());
  if (updated === undefined) throw new ConflictError('The client changed meanwhile; retry.');
};

export const rotateClientSecret = async (deps: OAuthClientsDeps, caller: Caller, id: string) => {
  const client = await find(deps, caller, id);
  checkWithinCaller(caller, client);
  await checkStandsInForCreator(deps, caller, client, 'rotate its secret');
  if (!client.isConfidential)
    throw new ValidationError('A public client has no secret to rotate.', [
      { field: 'id', code: 'VALIDATION_ERROR', message: 'the client is public (is_confidential: false)' },
    ]);
  const secret = newSecret(deps.random);
  const updated = await deps.clients.update(client, { secretHash: secret.hash }, deps.clock.now().toISOString());
  if (updated === undefined) throw new ConflictError('The client changed meanwhile; retry.');
  return { client_id: client.clientId, client_secret: secret.secret };
};
