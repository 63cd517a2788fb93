// TokenGenerator adapter and API keys, from node:crypto's CSPRNG.
import { createHash, randomBytes } from 'node:crypto';
import type { TokenGenerator } from '../../domain/identity/ports.js';

export const randomTokens: TokenGenerator = {
  random: (bytes = 32) => randomBytes(bytes).toString('base64url'),
  hash: (token) => createHash('sha256').update(token, 'utf8').digest('hex'),
};

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const API_KEY_PREFIX = 'dpl_';
const API_KEY_BODY_LENGTH = 40;
const API_KEY_DISPLAY_LENGTH = 12;
/** 4 * 62: bytes at or above it are dropped, so `byte % 62` picks every character equally often. */
const UNBIASED_LIMIT = 248;

/** `count` base62 characters: rejection sampling over random bytes (3% are dropped), no modulo bias. */
const randomBase62 = (count: number): string => {
  let text = '';
  while (text.length < count) {
    for (const byte of randomBytes(count + 8)) {
      if (byte < UNBIASED_LIMIT && text.length < count) text += BASE62[byte % BASE62.length];
    }
  }
  return text;
};

/**
 * A new API key, `dpl_` and 40 base62 characters (about 238 bits), and its display prefix (`dpl_` and the first
 * 8 characters), which identifies the key in lists without revealing it. Store only `randomTokens.hash(fullKey)`.
 */
export const newApiKey = (): { fullKey: string; prefix: string } => {
  const fullKey = `${API_KEY_PREFIX}${randomBase62(API_KEY_BODY_LENGTH)}`;
  return { fullKey, prefix: fullKey.slice(0, API_KEY_DISPLAY_LENGTH) };
};
