import { InvalidTokenError } from './errors.js';
import type { IdentityDeps } from './deps.js';
import { userView } from './sessions.js';
import type { Caller, UserView } from './types.js';

export interface MeView extends UserView {
  readonly email_verified: boolean;
  readonly last_login_at: string | null;
  readonly tenant_id: string | null;
  readonly two_factor_enabled: boolean;
}

export const getMe = async (deps: Pick<IdentityDeps, 'users' | 'roles'>, caller: Caller): Promise<MeView> => {
  const user = await deps.users.get(caller.userId);
  if (user === undefined) throw new InvalidTokenError('The account of this token no longer exists.');
  return {
    ...(await userView(deps, user)),
    email_verified: user.emailVerified,
    last_login_at: user.lastLoginAt,
    tenant_id: user.tenantId,
    two_factor_enabled: user.twoFactor.enabled,
  };
};
