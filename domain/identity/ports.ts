// Ports of the identity context. Adapters: infra/crypto/ (hashing, encryption, TOTP, random tokens) and
// infra/dynamodb/ (repositories, rate limits).
import type { Permission } from './permissions.js';
import type { IdentityLink, RefreshSession, TokenClaims, TwoFactor, User, UserChanges } from './types.js';

/** Argon2id password hashes. */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** False for a wrong password or a malformed hash; never throws for either. */
  verify(hash: string, password: string): Promise<boolean>;
  /** Spends the time of one verification, so an unknown email answers as slowly as a wrong password. */
  burnTime(password: string): Promise<void>;
}

/**
 * Authenticated encryption of secrets at rest (TOTP secrets, signing keys). `context` is bound to the
 * ciphertext (for example `totp:<user id>`), so a ciphertext copied onto another record does not decrypt.
 */
export interface SecretCipher {
  encrypt(plaintext: string, context: string): string;
  /** Throws SecretCipherError for a tampered ciphertext, a wrong context or an unknown key. */
  decrypt(ciphertext: string, context: string): string;
}

/** RFC 6238 TOTP: 30 s steps, 6 digits, SHA-1 (what authenticator apps use). */
export interface Totp {
  generateSecret(): string; // base32
  otpauthUrl(secret: string, account: string, issuer: string): string;
  /** The time step the code belongs to (current step +/- 1), or undefined when it matches none. */
  matchStep(secret: string, code: string, at: Date): Promise<number | undefined>;
}

/** High-entropy random tokens and their lookup hashes. */
export interface TokenGenerator {
  /** A random URL-safe token of `bytes` random bytes (default 32). */
  random(bytes?: number): string;
  /** A hex SHA-256 of a token: what is stored to find it again without storing it. */
  hash(token: string): string;
}

export interface RatePolicy {
  /** Sustained requests per second. */
  readonly ratePerSecond: number;
  /** Requests allowed at once after a quiet period. */
  readonly burst: number;
}

export interface RateDecision {
  readonly allowed: boolean;
  /** Whole requests still available right now (0 when refused). */
  readonly remaining: number;
  /** Seconds until a request would be allowed again (0 when allowed). */
  readonly retryAfterSeconds: number;
}

/** A rate limit shared by every function instance (state in DynamoDB, atomic updates). */
export interface RateLimiter {
  /** Takes `count` (default 1) tokens of the shared bucket at once, or none. */
  take(key: string, policy: RatePolicy, now: Date, count?: number): Promise<RateDecision>;
}

export interface LoginThrottlePolicy {
  /** Failed attempts allowed per window before the lockout starts. */
  readonly maxFailures: number;
  readonly windowSeconds: number;
  readonly lockoutSeconds: number;
}

export interface LockoutState {
  readonly locked: boolean;
  readonly retryAfterSeconds: number;
}

/** Counts failed logins per client address and locks the address out after too many. */
export interface LoginThrottle {
  check(ip: string, now: Date): Promise<LockoutState>;
  /** Records one failure; the returned state includes it (the attempt that crosses the limit locks). */
  recordFailure(ip: string, now: Date): Promise<LockoutState>;
}

/** Wrong two-factor codes per user, across pending tokens, enable and disable; a lockout after too many. */
export interface TwoFactorThrottle extends LoginThrottle {
  /**
   * Takes back one failure: attempts are recorded before their code is checked (so concurrent guesses never
   * exceed the limit), and a right code is no failure.
   */
  release(userId: string, now: Date): Promise<void>;
}

/** The attempts of one pending two-factor token (by its hash): a few codes, and one success. */
export interface PendingTwoFactorAttempts {
  /** Takes one of `max` code attempts; false when the token has used them all or was used. */
  reserve(tokenHash: string, max: number, expiresAt: Date): Promise<boolean>;
  /** Marks the token used after a right code; false when it was used already. */
  consume(tokenHash: string): Promise<boolean>;
}

// --- Records and tokens -------------------------------------------------------------------------------------

export interface UserRepository {
  /** Throws ConflictError when the email or the username is taken (case-insensitive). */
  create(user: User): Promise<void>;
  get(id: string): Promise<User | undefined>;
  findByEmail(email: string): Promise<User | undefined>;
  /** Whether any user exists at all (the bootstrap admin is created only into an empty service). */
  any(): Promise<boolean>;
  recordLogin(id: string, at: Date): Promise<void>;
  /** Revokes every token issued until `at` (logout of all sessions). */
  revokeTokens(id: string, at: Date): Promise<void>;
  /**
   * Replaces the password hash, only if it is still `expected`, and in the same write revokes every token issued
   * until `at` (never moving that instant backwards); false otherwise (changed meanwhile, or no user).
   */
  setPassword(id: string, hash: string, expected: string, at: Date): Promise<boolean>;
  /** Replaces the two-factor state, only if it is still `expected` (enabled flag and last step). False otherwise. */
  setTwoFactor(id: string, next: TwoFactor, expected: Pick<TwoFactor, 'enabled' | 'lastStep'>): Promise<boolean>;
  /** Records that a code of `step` was used; false when that step or a later one was used already (replay). */
  acceptTwoFactorStep(id: string, step: number): Promise<boolean>;
  /**
   * Removes one recovery code (by its hash) while 2FA is on, with a conditional write: of two concurrent uses of one
   * code, exactly one gets true. False when 2FA is off or the code is not there (used, replaced, never issued).
   */
  useRecoveryCode(id: string, codeHash: string): Promise<boolean>;
}

export interface SessionRepository {
  create(session: RefreshSession): Promise<void>;
  find(
    tokenHash: string,
  ): Promise<(RefreshSession & { readonly rotated: boolean; readonly familyRevoked: boolean }) | undefined>;
  /** Retires `tokenHash` and stores `next` atomically; false when `tokenHash` was already retired (reuse). */
  rotate(tokenHash: string, next: RefreshSession): Promise<boolean>;
  revokeFamily(familyId: string, at: Date): Promise<void>;
}

/** Signs and verifies the service's JWTs (access and pending-2FA tokens) and publishes the public keys. */
export interface TokenService {
  issue(claims: TokenClaims, ttlSeconds: number): Promise<string>;
  /** The claims of a token this service signed; throws TokenExpiredError or InvalidTokenError. */
  verify(token: string): Promise<TokenClaims>;
}

/** Permissions of role names: the system roles, and custom roles stored by the admin roles endpoints. */
export interface RoleDirectory {
  permissionsOf(roles: readonly string[]): Promise<ReadonlySet<Permission>>;
}

export interface ApiKey {
  readonly id: string;
  readonly userId: string;
  readonly tenantId: string | null;
  readonly name: string;
  readonly description: string | null;
  /** The first characters of the key (`dpl_xxxxxxxx`), for lists. */
  readonly keyPrefix: string;
  readonly keyHash: string;
  readonly scopes: readonly Permission[];
  readonly createdAt: string;
  readonly expiresAt: string | null;
  readonly lastUsedAt: string | null;
  readonly lastUsedIp: string | null;
  readonly revokedAt: string | null;
}

export interface ApiKeyRepository {
  create(key: ApiKey): Promise<void>;
  findByHash(keyHash: string): Promise<ApiKey | undefined>;
  listByUser(userId: string): Promise<readonly ApiKey[]>;
  get(id: string): Promise<ApiKey | undefined>;
  /** Revokes a key the caller has read; false when it was already revoked. */
  revoke(key: ApiKey, at: Date): Promise<boolean>;
  recordUse(keyHash: string, at: Date, ip: string): Promise<void>;
}

/** A new full API key and its display prefix. */
export type ApiKeyFactory = () => { readonly fullKey: string; readonly prefix: string };

/** Who an SSE token or session stands for: a user login, or an API key. */
export interface SseGrant {
  readonly kind: 'user' | 'api_key';
  readonly userId: string;
  readonly apiKeyId: string | null;
  readonly sessionId: string;
  /** Epoch ms the SSE session started: a logout after it ends the session. */
  readonly sessionStartedAt: number;
}

export interface SseTokenRepository {
  /** Stores a single-use token (by hash) until `expiresAt`. */
  putToken(tokenHash: string, grant: SseGrant, expiresAt: Date): Promise<void>;
  /** Deletes the token and answers its grant, atomically; undefined when unknown, used or expired. */
  consumeToken(tokenHash: string, now: Date): Promise<SseGrant | undefined>;
  putSession(grant: SseGrant, refreshHash: string, expiresAt: Date): Promise<void>;
  /** Swaps the session's refresh token if `oldRefreshHash` is current and the session lives; its grant, or undefined. */
  rotateSession(
    sessionId: string,
    oldRefreshHash: string,
    newRefreshHash: string,
    now: Date,
  ): Promise<SseGrant | undefined>;
  /**
   * Ends a session for good (idempotent): it is never renewed again, and its tokens and streams stop with it.
   * Answers the ended session's grant (undefined when there was none), so its viewer connections can be closed.
   */
  endSession(sessionId: string): Promise<SseGrant | undefined>;
  /** Whether the session was not ended (its expiry aside: a stream opened in time keeps its own limits). */
  sessionExists(sessionId: string): Promise<boolean>;
}

export interface Role {
  readonly id: string;
  readonly shortId: string;
  readonly name: string;
  readonly description: string | null;
  readonly isSystem: boolean;
  readonly permissions: readonly Permission[];
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** Custom roles (system roles are code). Names are unique case-insensitively, system names included. */
export interface RoleRepository {
  list(): Promise<readonly Role[]>;
  get(idOrShortId: string): Promise<Role | undefined>;
  findByName(name: string): Promise<Role | undefined>;
  /** ConflictError when the name is taken. */
  create(role: Role): Promise<void>;
  /** Saves name, description and permissions; ConflictError when a new name is taken. */
  update(previous: Role, next: Role): Promise<void>;
  delete(role: Role): Promise<void>;
}

/** The users of the service, for administration (small lists: read whole, filtered in memory). */
export interface UserDirectory {
  listAll(): Promise<readonly User[]>;
  /** By UUID or short id. */
  find(idOrShortId: string): Promise<User | undefined>;
  /**
   * Writes only `changes` (and updatedAt), if the stored user is still at `previous.revision`; false otherwise
   * (another write came first: read again). Increments the revision. With `unlink` (the user's identity link), the
   * same write also ends that link: identityLink null, mappedRoles emptied, the subject's claim freed and the
   * provider's linked-user count decremented (`changes.roles` is then the roles without the mapped ones).
   */
  update(previous: User, changes: UserChanges, at: Date, unlink?: IdentityLink): Promise<boolean>;
  /** Deletes the user and its email, username and short-id claims. */
  delete(user: User): Promise<void>;
  /**
   * Replaces the role names of a user (rename or removal of a role), and the names among them held only through an
   * identity provider's role mappings (User.mappedRoles).
   */
  replaceRoles(id: string, roles: readonly string[], at: Date, mappedRoles?: readonly string[]): Promise<void>;
}

/** Role names referenced by identity providers' role mappings (domain/sso), kept in step with role renames. */
export interface RoleMappingReferences {
  /** Points every mapping to role `from` at `to`; undefined: deletes those mappings. */
  renameRole(from: string, to: string | undefined, at: Date): Promise<void>;
}
