// The composition root, rotation part: the encryption index and its backfill, and a cipher over the ring as this
// container has it (the cloud: the parameter at cold start). Apart from encryption-wiring.ts so that only the
// rotation's bundle holds the table Scan of the backfill.
import type {
  EncryptionIndexBackfill,
  EncryptionIndexReader,
  EncryptionIndexWriter,
} from '../../domain/encryption/ports.js';
import type { SecretCipher } from '../../domain/identity/ports.js';
import type { Clock } from '../../domain/shared/ports.js';
import { AesGcmSecretCipher, keyringInfo, parseKeyring } from '../../infra/crypto/secret-cipher.js';
import { DynamoEncryptionBackfill } from '../../infra/dynamodb/encryption-backfill.js';
import { DynamoEncryptionIndex } from '../../infra/dynamodb/encryption-store.js';
import { keyRing } from './key-ring.js';
import { once } from './once.js';
import { infra } from './wiring.js';

export interface RotationDeps {
  readonly index: EncryptionIndexReader & EncryptionIndexWriter;
  readonly backfill: EncryptionIndexBackfill;
  /** The ring as it is now: its ids, and a cipher that encrypts with its active key. */
  readonly ring: () => {
    readonly activeKeyId: string;
    readonly keyIds: readonly string[];
    readonly cipher: SecretCipher;
  };
  readonly clock: Clock;
}

export const rotationDeps = once((): RotationDeps => {
  const { config: cfg, db, clock } = infra();
  return {
    index: new DynamoEncryptionIndex(db, cfg.TABLE_NAME),
    backfill: new DynamoEncryptionBackfill(db, cfg.TABLE_NAME),
    ring: () => {
      const keyring = parseKeyring(keyRing()());
      return { ...keyringInfo(keyring), cipher: new AesGcmSecretCipher(keyring) };
    },
    clock,
  };
});
