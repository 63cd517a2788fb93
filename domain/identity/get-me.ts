// GET /auth/me: the user a credential acts for. A user session: the user's roles and permissions. A delegated
// credential (API key, OAuth token): what it acts with (its effective permissions and roles, never its owner's
// whole set), and which credential it is (`credential`; null for a user session).
import { InvalidTokenError } from './errors.js';
import type { IdentityDeps } from './deps.js';
import { userView } from './sessions.js';
import type { Caller, UserView } from './types.js';

export interface CredentialView {
  readonly type: 'api_key' | 'oauth_token';
  /** The API key's id, or the OAuth client's client_id. */
  readonly id: string;
  /** The key's or the client's name. */
  readonly name: string | null;
  /** What the credential was given; `permissions` says what it acts with now (these ∩ the owner's current ones). */
  readonly scopes: readonly string[];
}

export interface MeView extends UserView {
  readonly email_verified: boolean;
  readonly last_login_at: string | null;
  readonly tenant_id: string | null;
  readonly two_factor_enabled: boolean;
  /** Unused recovery codes (0 while 2FA is off): the count only, never a code. */
  readonly two_factor_recovery_codes_left: number;
  readonly credential: CredentialView | null;
}

const credentialView = async (deps: Pick<IdentityDeps, 'oauth'>, caller: Caller): Promise<CredentialView | null> => {
  const credential = caller.credential;
  if (credential === undefined || credential.type === 'trigger') return null;
  const name =
    credential.type === 'oauth'
      ? ((await deps.oauth?.clients.findByClientId(credential.id))?.name ?? null)
      : (credential.name ?? null);
  return {
    type: credential.type === 'oauth' ? 'oauth_token' : 'api_key',
    id: credential.id,
    name,
    scopes: [...credential.scopes],
  };
};

export const getMe = async (deps: Pick<IdentityDeps, 'users' | 'roles' | 'oauth'>, caller: Caller): Promise<MeView> => {
  const user = await deps.users.get(caller.userId);
  if (user === undefined) throw new InvalidTokenError('The account of this token no longer exists.');
  const view = await userView(deps, user);
  const credential = await credentialView(deps, caller);
  return {
    ...view,
    ...(caller.kind === 'user' ? {} : { roles: [...caller.roles], permissions: [...caller.permissions].sort() }),
    email_verified: user.emailVerified,
    last_login_at: user.lastLoginAt,
    tenant_id: user.tenantId,
    two_factor_enabled: user.twoFactor.enabled,
    two_factor_recovery_codes_left: user.twoFactor.enabled ? (user.twoFactor.recoveryCodes?.length ?? 0) : 0,
    credential,
  };
};
