// The composition root, encryption part: the encryption index, the verify slots and the key ring's ids, for the
// admin encryption endpoints (and the rotation).
import type { EncryptionDeps } from '../../domain/encryption/ports.js';
import { keyringInfo, parseKeyring } from '../../infra/crypto/secret-cipher.js';
import { DynamoEncryptionIndex, DynamoVerifySlots } from '../../infra/dynamodb/encryption-store.js';
import { keyRing } from './key-ring.js';
import { once } from './once.js';
import { infra } from './wiring.js';

export const encryptionDeps = once((): EncryptionDeps => {
  const { config: cfg, db, clock } = infra();
  return {
    index: new DynamoEncryptionIndex(db, cfg.TABLE_NAME),
    keyring: async () => keyringInfo(parseKeyring(keyRing()())),
    slots: new DynamoVerifySlots(db, cfg.TABLE_NAME),
    clock,
  };
});
