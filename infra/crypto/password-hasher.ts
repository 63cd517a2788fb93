// PasswordHasher adapter: Argon2id through @node-rs/argon2 (native, off the event loop) with OWASP's parameters.
// The native addon is loaded on the first hash or verification, not at import: every authenticated function
// bundles this adapter (the identity wiring), but only sign-in and user changes hash, and loading the addon costs
// about 7-10 ms of a cold start.
import type { Algorithm, Options } from '@node-rs/argon2';
import type { PasswordHasher } from '../../domain/identity/ports.js';

// Algorithm.Argon2id: the package declares an ambient const enum, which isolatedModules cannot read as a value.
const argon2id: Algorithm.Argon2id = 2;

/** OWASP Password Storage Cheat Sheet: Argon2id, 19 MiB, 2 passes, 1 lane. Stored hashes carry their own. */
export const argon2idOptions: Readonly<Options> = Object.freeze({
  algorithm: argon2id,
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1,
});

/**
 * The hash of a random password nobody knows, made once with argon2idOptions: burnTime verifies against it so
 * an unknown account costs one real verification. Regenerate it whenever argon2idOptions change (a test checks).
 */
export const burnTimeHash =
  '$argon2id$v=19$m=19456,t=2,p=1$I8eNenZMkWk3vosZmBfq1w$RKnvtWLQ49//4NGys8apaDI2AI3vKy/87n2jUpeyNYI';

let addon: Promise<typeof import('@node-rs/argon2')> | undefined;
const argon2 = () => (addon ??= import('@node-rs/argon2'));

const safeVerify = async (encoded: string, password: string): Promise<boolean> => {
  const { verify } = await argon2();
  try {
    return await verify(encoded, password);
  } catch {
    return false; // not a PHC string argon2 can read
  }
};

export const argon2PasswordHasher: PasswordHasher = {
  hash: async (password) => (await argon2()).hash(password, argon2idOptions),
  verify: (encoded, password) => safeVerify(encoded, password),
  burnTime: async (password) => {
    await safeVerify(burnTimeHash, password);
  },
};
