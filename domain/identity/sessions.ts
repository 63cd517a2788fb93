// Starting a session: an access token, a refresh token of a new family, the login recorded.
import type { IdentityDeps } from './deps.js';
import type { SessionResult, User, UserView } from './types.js';

export interface StartedSession {
  readonly body: SessionResult;
  readonly refreshToken: string;
  readonly refreshExpiresAt: Date;
}

export const userView = async (deps: Pick<IdentityDeps, 'roles'>, user: User): Promise<UserView> => ({
  id: user.id,
  email: user.email,
  username: user.username,
  display_name: user.displayName,
  status: user.status,
  roles: [...user.roles],
  permissions: [...(await deps.roles.permissionsOf(user.roles))].sort(),
  created_at: user.createdAt,
});

export const accessTokenFor = async (deps: IdentityDeps, user: User, now: Date): Promise<SessionResult> => ({
  access_token: await deps.tokens.issue(
    { type: 'access', userId: user.id, tenantId: user.tenantId, issuedAt: now.getTime() },
    deps.settings.accessTokenTtlSeconds,
  ),
  token_type: 'Bearer',
  expires_in: deps.settings.accessTokenTtlSeconds,
  user: await userView(deps, user),
});

export const startSession = async (deps: IdentityDeps, user: User): Promise<StartedSession> => {
  const now = deps.clock.now();
  const refreshToken = deps.random.random();
  const refreshExpiresAt = new Date(now.getTime() + deps.settings.refreshTokenTtlSeconds * 1000);
  await deps.sessions.create({
    tokenHash: deps.random.hash(refreshToken),
    userId: user.id,
    familyId: deps.random.random(16),
    issuedAt: now.getTime(),
    expiresAt: refreshExpiresAt.getTime(),
  });
  await deps.users.recordLogin(user.id, now);
  return { body: await accessTokenFor(deps, user, now), refreshToken, refreshExpiresAt };
};
