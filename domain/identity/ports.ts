// Ports of the identity context. Adapters: infra/crypto/ (hashing, encryption, TOTP, random tokens) and
// infra/dynamodb/ (repositories, rate limits).

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
  take(key: string, policy: RatePolicy, now: Date): Promise<RateDecision>;
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
