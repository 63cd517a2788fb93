// A user made directly through the service's own wiring (for e2e tests that run the stack in this process).
export const createUser = async (
  email: string,
  password: string,
  roles: string[],
  tenantId: string | null = null,
): Promise<string> => {
  const { identityDeps } = await import('../../functions/shared/identity-wiring.js');
  const deps = identityDeps();
  const { id, shortId } = await deps.ids.next('user');
  const now = new Date().toISOString();
  await deps.users.create({
    id,
    shortId,
    email,
    username: email.split('@')[0]!,
    displayName: null,
    status: 'active',
    roles,
    tenantId,
    passwordHash: await deps.hasher.hash(password),
    twoFactor: { enabled: false, secret: null, lastStep: null },
    emailVerified: false,
    tokensValidAfter: 0,
    revision: 0,
    createdAt: now,
    updatedAt: now,
    lastLoginAt: null,
  });
  return id;
};
