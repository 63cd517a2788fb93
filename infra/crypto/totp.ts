// Totp adapter: RFC 6238 through otplib 13 (its default audited noble/scure plugins), pinned to what
// authenticator apps use: 30 s steps, 6 digits, SHA-1, 20-byte base32 secrets.
import { generateSecret, generateURI, verify } from 'otplib';
import type { Totp } from '../../domain/identity/ports.js';

const PERIOD_SECONDS = 30;
const SixDigits = /^\d{6}$/;
const settings = { algorithm: 'sha1', digits: 6, period: PERIOD_SECONDS } as const;

export const otplibTotp: Totp = {
  generateSecret: () => generateSecret({ length: 20 }),

  otpauthUrl: (secret, account, issuer) => generateURI({ ...settings, issuer, label: account, secret }),

  async matchStep(secret, code, at) {
    if (!SixDigits.test(code)) return undefined;
    try {
      // A tolerance of one period either side spans exactly the previous, current and next steps.
      const result = await verify({
        ...settings,
        secret,
        token: code,
        epoch: Math.floor(at.getTime() / 1000),
        epochTolerance: PERIOD_SECONDS,
      });
      // otplib types the result for HOTP too; a TOTP match always carries its timeStep.
      return result.valid && 'timeStep' in result ? result.timeStep : undefined;
    } catch {
      return undefined; // otplib throws for a secret it cannot decode or an invalid time: no match either way
    }
  },
};
