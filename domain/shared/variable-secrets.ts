// How a deployment variable's secret value is kept: sealed with the SecretCipher under its own context when the plan
// is made, opened when a command goes to its agent, an analysis reads it, or a redeploy carries it over. A leaf that
// deployments, targets, analysis and encryption all read, so none of them imports another for it.
import type { SecretCipher } from '../identity/ports.js';

/** Starts the stored form of a secret value (ciphertext); whether a value is secret is the plan's flag, not this. */
export const ENCRYPTED_PREFIX = 'enc:';

/** The SecretCipher context of deployment variables. */
export const VARIABLE_CONTEXT = 'deployment-variable';

/** A secret value as stored: `enc:` + ciphertext. */
export const sealVariable = (cipher: SecretCipher, value: string): string =>
  `${ENCRYPTED_PREFIX}${cipher.encrypt(value, VARIABLE_CONTEXT)}`;

/**
 * The plain value of a stored variable: a secret one (the stored flag) is decrypted, any other is returned as given,
 * even when it starts with `enc:`.
 */
export const openVariable = (cipher: SecretCipher, stored: string, secret: boolean): string =>
  secret
    ? cipher.decrypt(
        stored.startsWith(ENCRYPTED_PREFIX) ? stored.slice(ENCRYPTED_PREFIX.length) : stored,
        VARIABLE_CONTEXT,
      )
    : stored;
