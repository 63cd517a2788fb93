// The process's key ring text: ENCRYPTION_KEYS (the cloud: fixed at cold start), or in the local stage the key file
// the stack names in ENCRYPTION_KEYS_FILE, followed as it changes (infra/crypto/key-ring-source.ts). Read by the
// cipher and by the encryption endpoints' key ids, so both follow a rotation. Outside the local stage the file is
// ignored even if named: there a ring changes with a cold start only (docs/cloud.md, "Rotating the data key").
import { requireEncryptionKeys } from '../../infra/config.js';
import { keyRingSource } from '../../infra/crypto/key-ring-source.js';
import { once } from './once.js';
import { infra } from './wiring.js';

export const keyRing = once(() => {
  const cfg = infra().config;
  const file = cfg.STAGE === 'local' ? cfg.ENCRYPTION_KEYS_FILE : undefined;
  return keyRingSource(file, () => requireEncryptionKeys(cfg));
});
