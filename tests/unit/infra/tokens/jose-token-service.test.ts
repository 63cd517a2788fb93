// The token service's verify when the signing key cannot be read: the service's fault (500/503), never a 401 that
// would make a client drop a good token (the faults e2e at 50 % saw 401s from a throttled key read).
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { DatabaseError } from '../../../../domain/errors.js';
import { InvalidTokenError } from '../../../../domain/identity/errors.js';
import type { SecretCipher } from '../../../../domain/identity/ports.js';
import { JoseTokenService } from '../../../../infra/tokens/jose-token-service.js';

const aToken = async (kid: string) => {
  const { privateKey } = await generateKeyPair('ES256');
  return new SignJWT({ typ: 'access', ims: Date.now() })
    .setProtectedHeader({ alg: 'ES256', kid })
    .setSubject('u-1')
    .setIssuer('https://deployer.example')
    .setAudience('deployer-api')
    .setExpirationTime('1h')
    .sign(privateKey);
};

const service = (send: () => Promise<unknown>) =>
  new JoseTokenService(
    { send } as unknown as DynamoDBDocumentClient,
    'table',
    {} as SecretCipher,
    'https://deployer.example',
  );

describe('JoseTokenService.verify', () => {
  it('passes a failed signing-key read on as the database error it is, not as an invalid token', async () => {
    const tokens = service(async () => {
      throw new DatabaseError(true);
    });
    await expect(tokens.verify(await aToken('k-1'))).rejects.toBeInstanceOf(DatabaseError);
  });

  it('still answers an invalid token for a key that does not exist', async () => {
    const tokens = service(async () => ({ Item: undefined }));
    await expect(tokens.verify(await aToken('k-2'))).rejects.toBeInstanceOf(InvalidTokenError);
  });
});
