// The first admin of an empty service, from BOOTSTRAP_ADMIN_EMAIL / BOOTSTRAP_ADMIN_PASSWORD. Idempotent: does
// nothing once any user exists, and a concurrent start that loses the race is not an error.
import { ConflictError } from '../errors.js';
import type { IdentityDeps } from './deps.js';

export const ensureBootstrapAdmin = async (
  deps: Pick<IdentityDeps, 'users' | 'hasher' | 'ids' | 'clock'>,
  admin: { email: string; password: string },
): Promise<'created' | 'exists'> => {
  if (await deps.users.any()) return 'exists';
  const { id, shortId } = await deps.ids.next('user');
  const now = deps.clock.now().toISOString();
  try {
    await deps.users.create({
      id,
      shortId,
      email: admin.email,
      username: admin.email.split('@')[0] || 'admin',
      displayName: 'Administrator',
      status: 'active',
      roles: ['admin'],
      tenantId: null,
      passwordHash: await deps.hasher.hash(admin.password),
      twoFactor: { enabled: false, secret: null, lastStep: null },
      emailVerified: true,
      tokensValidAfter: 0,
      revision: 0,
      createdAt: now,
      updatedAt: now,
      lastLoginAt: null,
    });
    return 'created';
  } catch (error) {
    if (error instanceof ConflictError) return 'exists';
    throw error;
  }
};
