import { createHash } from 'node:crypto';
// In-memory fakes of the identity ports, with the same contracts as the DynamoDB and crypto adapters.
import { ConflictError } from '../../domain/errors.js';
import { authenticate } from '../../domain/identity/authenticate.js';
import { login } from '../../domain/identity/login.js';
import type { IdentityDeps } from '../../domain/identity/deps.js';
import { InvalidTokenError, TokenExpiredError } from '../../domain/identity/errors.js';
import type {
  ApiKey,
  ApiKeyRepository,
  LockoutState,
  PendingTwoFactorAttempts,
  Role,
  TwoFactorThrottle,
  RoleRepository,
  SseGrant,
  SseTokenRepository,
  UserDirectory,
  PasswordHasher,
  SessionRepository,
  TokenGenerator,
  TokenService,
  UserRepository,
} from '../../domain/identity/ports.js';
import { roleDirectory } from '../../domain/identity/roles-admin.js';
import type { RefreshSession, TokenClaims, TwoFactor, User, UserChanges } from '../../domain/identity/types.js';
import type { IdGenerator } from '../../domain/shared/ports.js';
import { AesGcmSecretCipher } from '../../infra/crypto/secret-cipher.js';
import { otplibTotp } from '../../infra/crypto/totp.js';
import { FakeClock } from './clock.js';

export class FakeUserRepository implements UserRepository {
  readonly users = new Map<string, User>();
  async create(user: User) {
    for (const other of this.users.values()) {
      if (other.email.toLowerCase() === user.email.toLowerCase()) throw new ConflictError('email taken');
      if (other.username.toLowerCase() === user.username.toLowerCase()) throw new ConflictError('username taken');
    }
    this.users.set(user.id, user);
  }
  async get(id: string) {
    return this.users.get(id);
  }
  async findByEmail(email: string) {
    return [...this.users.values()].find((u) => u.email.toLowerCase() === email.toLowerCase());
  }
  async any() {
    return this.users.size > 0;
  }
  async recordLogin(id: string, at: Date) {
    const user = this.users.get(id);
    if (user) this.users.set(id, { ...user, lastLoginAt: at.toISOString(), revision: user.revision + 1 });
  }
  async setTwoFactor(id: string, next: TwoFactor, expected: Pick<TwoFactor, 'enabled' | 'lastStep'>) {
    const user = this.users.get(id);
    if (!user || user.twoFactor.enabled !== expected.enabled || user.twoFactor.lastStep !== expected.lastStep)
      return false;
    this.users.set(id, { ...user, twoFactor: next, revision: user.revision + 1 });
    return true;
  }
  async acceptTwoFactorStep(id: string, step: number) {
    const user = this.users.get(id);
    if (!user || (user.twoFactor.lastStep !== null && user.twoFactor.lastStep >= step)) return false;
    this.users.set(id, { ...user, twoFactor: { ...user.twoFactor, lastStep: step }, revision: user.revision + 1 });
    return true;
  }
  async useRecoveryCode(id: string, codeHash: string) {
    const user = this.users.get(id);
    const codes = user?.twoFactor.recoveryCodes ?? [];
    if (!user || !user.twoFactor.enabled || !codes.includes(codeHash)) return false;
    const recoveryCodes = codes.filter((hash) => hash !== codeHash);
    this.users.set(id, { ...user, twoFactor: { ...user.twoFactor, recoveryCodes }, revision: user.revision + 1 });
    return true;
  }
  async setPassword(id: string, hash: string, expected: string, at: Date) {
    const user = this.users.get(id);
    if (!user || user.passwordHash !== expected || user.tokensValidAfter >= at.getTime()) return false;
    this.users.set(id, {
      ...user,
      passwordHash: hash,
      tokensValidAfter: at.getTime(),
      updatedAt: at.toISOString(),
      revision: user.revision + 1,
    });
    return true;
  }
  async revokeTokens(id: string, at: Date) {
    const user = this.users.get(id);
    if (user && user.tokensValidAfter < at.getTime())
      this.users.set(id, { ...user, tokensValidAfter: at.getTime(), revision: user.revision + 1 });
  }
}

export class FakeSessionRepository implements SessionRepository {
  readonly sessions = new Map<string, RefreshSession & { rotated: boolean }>();
  readonly revokedFamilies = new Set<string>();
  async create(session: RefreshSession) {
    this.sessions.set(session.tokenHash, { ...session, rotated: false });
  }
  async find(tokenHash: string) {
    const found = this.sessions.get(tokenHash);
    return found && { ...found, familyRevoked: this.revokedFamilies.has(found.familyId) };
  }
  async rotate(tokenHash: string, next: RefreshSession) {
    const current = this.sessions.get(tokenHash);
    if (!current || current.rotated) return false;
    this.sessions.set(tokenHash, { ...current, rotated: true });
    await this.create(next);
    return true;
  }
  async revokeFamily(familyId: string) {
    this.revokedFamilies.add(familyId);
  }
}

/** Tokens are readable JSON here; expiry follows the fake clock. */
export class FakeTokenService implements TokenService {
  constructor(private readonly clock: FakeClock) {}
  async issue(claims: TokenClaims, ttlSeconds: number) {
    return `fake.${Buffer.from(JSON.stringify({ ...claims, exp: claims.issuedAt + ttlSeconds * 1000 })).toString('base64url')}`;
  }
  async verify(token: string): Promise<TokenClaims> {
    if (!token.startsWith('fake.')) throw new InvalidTokenError();
    const { exp, ...claims } = JSON.parse(Buffer.from(token.slice(5), 'base64url').toString()) as TokenClaims & {
      exp: number;
    };
    if (exp <= this.clock.now().getTime()) throw new TokenExpiredError();
    return claims;
  }
}

export const fakeHasher: PasswordHasher = {
  hash: async (password) => `hashed:${password}`,
  verify: async (hash, password) => hash === `hashed:${password}`,
  burnTime: async () => undefined,
};

export const fakeRandom = (): TokenGenerator => {
  let n = 0;
  return { random: () => `token-${(n += 1)}`, hash: (token) => createHash('sha256').update(token).digest('hex') };
};

export class FakeApiKeyRepository implements ApiKeyRepository {
  readonly keys = new Map<string, ApiKey>();
  async create(key: ApiKey) {
    this.keys.set(key.id, key);
  }
  async findByHash(keyHash: string) {
    return [...this.keys.values()].find((k) => k.keyHash === keyHash);
  }
  async listByUser(userId: string) {
    return [...this.keys.values()].filter((k) => k.userId === userId);
  }
  async get(id: string) {
    return this.keys.get(id);
  }
  async revoke(given: ApiKey, at: Date) {
    const key = this.keys.get(given.id);
    if (!key || key.revokedAt) return false;
    this.keys.set(key.id, { ...key, revokedAt: at.toISOString() });
    return true;
  }
  readonly uses: string[] = [];
  async recordUse(keyHash: string, at: Date, ip: string) {
    const key = await this.findByHash(keyHash);
    this.uses.push(keyHash);
    if (key) this.keys.set(key.id, { ...key, lastUsedAt: at.toISOString(), lastUsedIp: ip });
  }
}

export class FakeSseTokenRepository implements SseTokenRepository {
  readonly tokens = new Map<string, { grant: SseGrant; expiresAt: number }>();
  readonly sessions = new Map<string, { grant: SseGrant; refreshHash: string; expiresAt: number }>();
  async putToken(tokenHash: string, grant: SseGrant, expiresAt: Date) {
    this.tokens.set(tokenHash, { grant, expiresAt: expiresAt.getTime() });
  }
  async consumeToken(tokenHash: string, now: Date) {
    const found = this.tokens.get(tokenHash);
    if (!found || found.expiresAt <= now.getTime()) return undefined;
    this.tokens.delete(tokenHash);
    return found.grant;
  }
  async putSession(grant: SseGrant, refreshHash: string, expiresAt: Date) {
    this.sessions.set(grant.sessionId, { grant, refreshHash, expiresAt: expiresAt.getTime() });
  }
  async rotateSession(sessionId: string, oldRefreshHash: string, newRefreshHash: string, now: Date) {
    const found = this.sessions.get(sessionId);
    if (!found || found.refreshHash !== oldRefreshHash || found.expiresAt <= now.getTime()) return undefined;
    this.sessions.set(sessionId, { ...found, refreshHash: newRefreshHash });
    return found.grant;
  }
  async endSession(sessionId: string) {
    const found = this.sessions.get(sessionId);
    this.sessions.delete(sessionId);
    return found?.grant;
  }
  async sessionExists(sessionId: string) {
    return this.sessions.has(sessionId);
  }
}

/** Pending two-factor tokens: attempts and single use, as DynamoPendingTwoFactorAttempts keeps them. */
export class FakePendingTwoFactorAttempts implements PendingTwoFactorAttempts {
  readonly tokens = new Map<string, { attempts: number; used: boolean }>();
  async reserve(tokenHash: string, max: number) {
    const state = this.tokens.get(tokenHash) ?? { attempts: 0, used: false };
    if (state.used || state.attempts >= max) return false;
    this.tokens.set(tokenHash, { ...state, attempts: state.attempts + 1 });
    return true;
  }
  async consume(tokenHash: string) {
    const state = this.tokens.get(tokenHash);
    if (state === undefined || state.used) return false;
    this.tokens.set(tokenHash, { ...state, used: true });
    return true;
  }
}

export class FakeLoginThrottle implements TwoFactorThrottle {
  readonly failures = new Map<string, number[]>();
  readonly lockedUntil = new Map<string, number>();
  constructor(private readonly policy = { maxFailures: 10, windowSeconds: 60, lockoutSeconds: 300 }) {}
  async check(ip: string, now: Date): Promise<LockoutState> {
    const until = this.lockedUntil.get(ip) ?? 0;
    return until > now.getTime()
      ? { locked: true, retryAfterSeconds: Math.ceil((until - now.getTime()) / 1000) }
      : { locked: false, retryAfterSeconds: 0 };
  }
  async recordFailure(ip: string, now: Date): Promise<LockoutState> {
    const recent = (this.failures.get(ip) ?? []).filter((t) => t > now.getTime() - this.policy.windowSeconds * 1000);
    recent.push(now.getTime());
    this.failures.set(ip, recent);
    if (recent.length > this.policy.maxFailures)
      this.lockedUntil.set(ip, now.getTime() + this.policy.lockoutSeconds * 1000);
    return this.check(ip, now);
  }
  async release(subject: string) {
    this.failures.set(subject, (this.failures.get(subject) ?? []).slice(0, -1));
  }
}

export const fakeIds = (): IdGenerator => {
  let n = 0;
  return {
    next: async () => ((n += 1), { id: `f0000000-0000-4000-8000-${String(n).padStart(12, '0')}`, shortId: `s${n}` }),
  };
};

export const identityFakes = () => {
  const clock = new FakeClock(new Date('2026-11-22T10:00:00.000Z'));
  const users = new FakeUserRepository();
  const sessions = new FakeSessionRepository();
  const throttle = new FakeLoginThrottle();
  const twoFactorThrottle = new FakeLoginThrottle({ maxFailures: 10, windowSeconds: 900, lockoutSeconds: 900 });
  const pendingTwoFactor = new FakePendingTwoFactorAttempts();
  const apiKeys = new FakeApiKeyRepository();
  let keyNumber = 0;
  const deps: IdentityDeps = {
    totp: otplibTotp,
    sseTokens: new FakeSseTokenRepository(),
    cipher: new AesGcmSecretCipher({ activeKeyId: 'test', keys: { test: Buffer.alloc(32, 7) } }),
    issuerName: 'Deployer (test)',
    apiKeys,
    newApiKey: () => {
      keyNumber += 1;
      const fullKey = `dpl_${String(keyNumber).padStart(40, '0')}`;
      return { fullKey, prefix: fullKey.slice(0, 12) };
    },
    users,
    sessions,
    tokens: new FakeTokenService(clock),
    roles: roleDirectory(new FakeRoleRepository()),
    hasher: fakeHasher,
    random: fakeRandom(),
    throttle,
    twoFactorThrottle,
    pendingTwoFactor,
    ids: fakeIds(),
    clock,
    settings: {
      accessTokenTtlSeconds: 3600,
      refreshTokenTtlSeconds: 14 * 86_400,
      twoFactorPendingTtlSeconds: 300,
      twoFactorCodesPerToken: 5,
      sseTokenTtlSeconds: 60,
      sseSessionTtlSeconds: 12 * 3600,
    },
  };
  return { deps, clock, users, sessions, throttle, twoFactorThrottle, pendingTwoFactor, apiKeys };
};

export const aUser = (overrides: Partial<User> = {}): User => ({
  id: '11111111-1111-4111-8111-111111111111',
  shortId: 'u1',
  email: 'ada@example.com',
  username: 'ada',
  displayName: 'Ada',
  status: 'active',
  roles: ['operator'],
  tenantId: null,
  passwordHash: 'hashed:correct horse',
  twoFactor: { enabled: false, secret: null, lastStep: null },
  emailVerified: true,
  tokensValidAfter: 0,
  revision: 0,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  lastLoginAt: null,
  ...overrides,
});

/** An in-memory RoleRepository (custom roles only; system roles are code). */
export class FakeRoleRepository implements RoleRepository {
  readonly roles = new Map<string, Role>();
  async list() {
    return [...this.roles.values()];
  }
  async get(idOrShortId: string) {
    return [...this.roles.values()].find((r) => r.id === idOrShortId || r.shortId === idOrShortId);
  }
  async findByName(name: string) {
    return [...this.roles.values()].find((r) => r.name.toLowerCase() === name.toLowerCase());
  }
  async create(role: Role) {
    if (await this.findByName(role.name)) throw new ConflictError('taken');
    this.roles.set(role.id, role);
  }
  async update(_previous: Role, next: Role) {
    this.roles.set(next.id, next);
  }
  async delete(role: Role) {
    this.roles.delete(role.id);
  }
}

/** Users with the administration side (UserDirectory) too. */
export class FakeUserStore extends FakeUserRepository implements UserDirectory {
  async listAll() {
    return [...this.users.values()];
  }
  async find(idOrShortId: string) {
    return [...this.users.values()].find((u) => u.id === idOrShortId || u.shortId === idOrShortId);
  }
  async update(previous: User, changes: UserChanges, at: Date) {
    const stored = this.users.get(previous.id);
    if (stored === undefined || stored.revision !== previous.revision) return false;
    this.users.set(stored.id, { ...stored, ...changes, updatedAt: at.toISOString(), revision: stored.revision + 1 });
    return true;
  }
  async delete(user: User) {
    this.users.delete(user.id);
  }
  async replaceRoles(id: string, roles: readonly string[], _at?: Date, mappedRoles?: readonly string[]) {
    const user = this.users.get(id);
    if (user)
      this.users.set(id, {
        ...user,
        roles,
        ...(mappedRoles === undefined ? {} : { mappedRoles }),
        revision: user.revision + 1,
      });
  }
}

/** The fakes with aUser() signed in: its access-token caller, as authenticate gives it. */
export const signedIn = async () => {
  const fakes = identityFakes();
  await fakes.users.create(aUser());
  const outcome = await login(fakes.deps, { email: 'ada@example.com', password: 'correct horse', ip: '1.1.1.1' });
  if (outcome.kind !== 'session') throw new Error('expected a session');
  const caller = await authenticate(fakes.deps, `Bearer ${outcome.body.access_token}`, '1.1.1.1');
  return { ...fakes, caller };
};
