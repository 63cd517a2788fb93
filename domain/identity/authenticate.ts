// authenticate: the Authorization header -> a Caller. Each failure is the spec's own code: no header, an empty
// one, a malformed one, an expired or invalid token, a pending-2FA token, a revoked token, an inactive account.
import { callerOfOAuthToken } from '../oauth/tokens.js';
import { authenticateApiKey } from './api-keys.js';
import {
  ForbiddenError,
  EmptyAuthHeaderError,
  InsufficientPermissionsError,
  InvalidAuthHeaderError,
  InvalidTokenError,
  MissingAuthHeaderError,
  TwoFactorRequiredError,
} from './errors.js';
import type { IdentityDeps } from './deps.js';
import { personName } from './names.js';
import type { Permission } from './permissions.js';
import type { Caller } from './types.js';

export const API_KEY_PREFIX = 'dpl_';

/** The bearer token of an Authorization header value. */
export const bearerToken = (header: string | undefined): string => {
  if (header === undefined) throw new MissingAuthHeaderError();
  const value = header.trim();
  if (value === '' || /^bearer$/i.test(value)) throw new EmptyAuthHeaderError();
  const match = /^Bearer +(\S+)$/i.exec(value);
  if (match === null) throw new InvalidAuthHeaderError();
  return match[1] as string;
};

export const authenticate = async (
  deps: Pick<IdentityDeps, 'tokens' | 'users' | 'roles' | 'apiKeys' | 'random' | 'clock' | 'oauth'>,
  authorization: string | undefined,
  ip: string,
): Promise<Caller> => {
  const token = bearerToken(authorization);
  if (token.startsWith(API_KEY_PREFIX)) return authenticateApiKey(deps, token, ip);
  const claims = await deps.tokens.verify(token);
  if (claims.type === 'two_factor_pending') throw new TwoFactorRequiredError();
  if (claims.type === 'oauth_access') {
    if (deps.oauth === undefined) throw new InvalidTokenError();
    return callerOfOAuthToken({ ...deps.oauth, users: deps.users, roles: deps.roles }, claims);
  }
  const user = await deps.users.get(claims.userId);
  if (user === undefined) throw new InvalidTokenError('The account of this token no longer exists.');
  if (claims.issuedAt <= user.tokensValidAfter)
    throw new InvalidTokenError('The token was revoked (logout or an account change): log in again.');
  if (user.status !== 'active')
    throw new ForbiddenError(`The account is ${user.status}.`, { reason: 'account_not_active' });
  return {
    kind: 'user',
    userId: user.id,
    userName: personName(user),
    tenantId: user.tenantId,
    roles: user.roles,
    permissions: await deps.roles.permissionsOf(user.roles),
  };
};

export const authorize = (caller: Caller, permission: Permission): void => {
  if (!caller.permissions.has(permission)) throw new InsufficientPermissionsError(permission);
};
