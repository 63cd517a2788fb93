// API keys: created only by a user login; scopes are permission names the creator holds (never wider); the key
// records the creator's tenant at creation; only its hash is kept and the full key is shown once. A key
// authenticates as its creator as of now (current tenant, current permissions) narrowed to its scopes.
import { NotFoundError, ValidationError } from '../errors.js';
import { InsufficientPermissionsError, InvalidCredentialsError } from './errors.js';
import type { IdentityDeps } from './deps.js';
import { callerOfCredential, requireUserSession } from './delegation.js';
import { isPermission, type Permission } from './permissions.js';
import type { ApiKey } from './ports.js';
import type { Caller } from './types.js';
import { closeRevokedViewers } from './viewers.js';

/** last_used_at is written at most this often per key, not on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface ApiKeyView {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly key_prefix: string;
  readonly scopes: readonly string[];
  readonly last_used_at: string | null;
  readonly last_used_ip: string | null;
  readonly created_at: string;
  readonly expires_at: string | null;
}

export const apiKeyView = (key: ApiKey): ApiKeyView => ({
  id: key.id,
  name: key.name,
  description: key.description,
  key_prefix: key.keyPrefix,
  scopes: [...key.scopes],
  last_used_at: key.lastUsedAt,
  last_used_ip: key.lastUsedIp,
  created_at: key.createdAt,
  expires_at: key.expiresAt,
});

export interface CreateApiKeyCommand {
  readonly name: string;
  readonly description?: string | undefined;
  readonly expires_in_days?: number | undefined;
  readonly scopes: readonly string[];
}

export const createApiKey = async (deps: IdentityDeps, caller: Caller, command: CreateApiKeyCommand) => {
  requireUserSession(caller, 'Creating an API key');
  const unknown = command.scopes.map((scope, index) => ({ scope, index })).filter(({ scope }) => !isPermission(scope));
  if (unknown.length > 0) {
    throw new ValidationError(
      `Unknown scopes: ${unknown.map((u) => u.scope).join(', ')}. Scopes are permission names such as deployments:read.`,
      unknown.map(({ scope, index }) => ({
        field: `scopes.${index}`,
        code: 'VALIDATION_ERROR',
        message: `'${scope}' is not a permission.`,
      })),
    );
  }
  const wider = command.scopes.find((scope) => !caller.permissions.has(scope as Permission));
  if (wider !== undefined) throw new InsufficientPermissionsError(wider);

  const now = deps.clock.now();
  const { fullKey, prefix } = deps.newApiKey();
  const { id } = await deps.ids.next('api_key');
  const key: ApiKey = {
    id,
    userId: caller.userId,
    tenantId: caller.tenantId,
    name: command.name,
    description: command.description ?? null,
    keyPrefix: prefix,
    keyHash: deps.random.hash(fullKey),
    scopes: [...new Set(command.scopes as Permission[])],
    createdAt: now.toISOString(),
    expiresAt:
      command.expires_in_days === undefined
        ? null
        : new Date(now.getTime() + command.expires_in_days * 86_400_000).toISOString(),
    lastUsedAt: null,
    lastUsedIp: null,
    revokedAt: null,
  };
  await deps.apiKeys.create(key);
  return {
    api_key: apiKeyView(key),
    full_key: fullKey,
    warning: 'Store this key now: it is shown only once and cannot be recovered.',
  };
};

export const listApiKeys = async (deps: Pick<IdentityDeps, 'apiKeys'>, caller: Caller) => ({
  api_keys: (await deps.apiKeys.listByUser(caller.userId)).filter((key) => key.revokedAt === null).map(apiKeyView),
});

export const revokeApiKey = async (
  deps: Pick<IdentityDeps, 'apiKeys' | 'clock' | 'viewers'>,
  caller: Caller,
  id: string,
) => {
  const key = await deps.apiKeys.get(id);
  if (key === undefined || key.userId !== caller.userId || key.revokedAt !== null)
    throw new NotFoundError('API key', id);
  await deps.apiKeys.revoke(key, deps.clock.now());
  await closeRevokedViewers(deps, { userId: key.userId, apiKeyId: key.id });
  return { message: `API key ${key.keyPrefix}… revoked.` };
};

/** The caller an API key stands for; INVALID_CREDENTIALS for an unknown, revoked or expired key. */
export const authenticateApiKey = async (
  deps: Pick<IdentityDeps, 'apiKeys' | 'users' | 'roles' | 'random' | 'clock'>,
  fullKey: string,
  ip: string,
): Promise<Caller> => {
  const now = deps.clock.now();
  const key = await deps.apiKeys.findByHash(deps.random.hash(fullKey));
  const invalid = new InvalidCredentialsError('The API key is not valid: it is unknown, revoked or expired.');
  if (key === undefined || key.revokedAt !== null) throw invalid;
  if (key.expiresAt !== null && Date.parse(key.expiresAt) <= now.getTime()) throw invalid;
  const caller = await callerOfApiKey(deps, key);
  if (caller === undefined) throw invalid;
  if (
    key.lastUsedAt === null ||
    Date.parse(key.lastUsedAt) < now.getTime() - LAST_USED_RESOLUTION_MS ||
    key.lastUsedIp !== ip
  ) {
    await deps.apiKeys.recordUse(key.keyHash, now, ip);
  }
  return caller;
};

/** The caller a live key stands for: its creator as of now, narrowed to its scopes; undefined when the creator is not active. */
export const callerOfApiKey = async (
  deps: Pick<IdentityDeps, 'users' | 'roles'>,
  key: ApiKey,
): Promise<Caller | undefined> => {
  const user = await deps.users.get(key.userId);
  if (user === undefined || user.status !== 'active') return undefined;
  // The user's tenant and permissions as of now, never the key record's: a user moved to another tenant takes their
  // keys along, and a role taken away narrows every key at once (the delegation rule).
  return callerOfCredential(deps.roles, user, { type: 'api_key', id: key.id, name: key.name, scopes: key.scopes });
};
