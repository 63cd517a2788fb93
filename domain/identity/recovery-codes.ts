// Two-factor recovery codes: ten per user, issued when 2FA is turned on and replaced together on request. Each is
// 10 characters of Crockford's base32 (no i, l, o or u; 50 random bits), shown once as `xxxxx-xxxxx`, stored only
// as a lookup hash bound to its user, and signs in once in place of an authenticator code.
import type { TokenGenerator } from './ports.js';

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const LENGTH = 10;

/**
 * The code as issued from what a user typed: any case, spaces and hyphens ignored, `o` read as 0 and `i`/`l` as 1
 * (Crockford's reading of the look-alikes). Undefined when it cannot be a recovery code.
 */
export const normalizeRecoveryCode = (typed: string): string | undefined => {
  const text = typed.toLowerCase().replace(/[\s-]/g, '').replace(/o/g, '0').replace(/[il]/g, '1');
  return text.length === LENGTH && [...text].every((c) => ALPHABET.includes(c)) ? text : undefined;
};

/** What is stored of a (normalized) code: bound to the user, so a hash says nothing across users. */
export const recoveryCodeHash = (random: TokenGenerator, userId: string, code: string): string =>
  random.hash(`recovery-code:${userId}:${code}`);

/** One code: 5 bits of each of 10 bytes of the SHA-256 of a fresh 256-bit token (32 divides 256: no bias). */
const newCode = (random: TokenGenerator): string => {
  const bytes = Buffer.from(random.hash(random.random(32)), 'hex').subarray(0, LENGTH);
  const text = [...bytes].map((byte) => ALPHABET[byte & 31]).join('');
  return `${text.slice(0, 5)}-${text.slice(5)}`;
};

/** A new set of codes (to show once) and their hashes (to store). */
export const issueRecoveryCodes = (
  random: TokenGenerator,
  userId: string,
): { readonly codes: string[]; readonly hashes: string[] } => {
  const codes = new Set<string>();
  while (codes.size < RECOVERY_CODE_COUNT) codes.add(newCode(random));
  const list = [...codes];
  return { codes: list, hashes: list.map((code) => recoveryCodeHash(random, userId, normalizeRecoveryCode(code)!)) };
};
