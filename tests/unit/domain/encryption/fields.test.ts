// The registry of encrypted fields: for each record type, every ciphertext of a stored item with its context and
// key id, and nothing that is not one (a plain variable, a command made before sealing, a 2FA never set up).
import { describe, expect, it } from 'vitest';
import {
  encryptedValues,
  keyIdOf,
  RECORD_TYPES,
  UNREADABLE,
  valuesByKey,
} from '../../../../domain/encryption/fields.js';
import { AesGcmSecretCipher } from '../../../../infra/crypto/secret-cipher.js';

const cipher = new AesGcmSecretCipher({ activeKeyId: 'k1', keys: { k1: Buffer.alloc(32, 1) } });
const sealed = (text: string, context: string) => cipher.encrypt(text, context);
const variable = (text: string) => `enc:${sealed(text, 'deployment-variable')}`;

const draft = () => ({
  config: { variables: { TOKEN: variable('t'), REGION: 'eu' }, promptedValues: { PIN: variable('p') } },
  plan: {
    resolvedVariables: {
      TOKEN: { value: variable('t'), secret: true },
      PIN: { value: variable('p'), secret: true },
      REGION: { value: 'eu', secret: false },
      // the stored flag decides, not the look of the value
      NOTE: { value: 'enc:not-a-secret', secret: false },
    },
  },
});

describe('encrypted fields', () => {
  it('lists every record type that stores ciphertexts', () => {
    expect(RECORD_TYPES).toEqual([
      'user',
      'signing_key',
      'deployment',
      'pending_request',
      'command',
      'analysis_settings',
      'identity_provider',
      'trigger',
      'webhook',
    ]);
  });

  it("finds a user's TOTP secret under its user's context, and nothing before 2FA is set up", () => {
    // Prepare
    const secret = sealed('JBSWY3DPEHPK3PXP', 'totp:u1');

    // Act
    const found = encryptedValues('user', { id: 'u1', twoFactor: { enabled: true, secret, lastStep: 1 } });
    const none = encryptedValues('user', { id: 'u2', twoFactor: { enabled: false, secret: null, lastStep: null } });

    // Assess
    expect(found).toEqual([
      {
        path: ['twoFactor', 'secret'],
        stored: secret,
        prefix: '',
        ciphertext: secret,
        context: 'totp:u1',
        keyId: 'k1',
      },
    ]);
    expect(none).toEqual([]);
  });

  it("finds a signing key's private half under its kid", () => {
    const privateKey = sealed('{}', 'signing-key:kid-1');
    expect(encryptedValues('signing_key', { kid: 'kid-1', privateKey })).toMatchObject([
      { path: ['privateKey'], context: 'signing-key:kid-1', keyId: 'k1' },
    ]);
  });

  it("finds a deployment's secret variables in the plan, the given and the prompted values, not the plain ones", () => {
    // Act
    const found = encryptedValues('deployment', draft());

    // Assess
    expect(found.map((v) => v.path.join('.'))).toEqual([
      'plan.resolvedVariables.PIN.value',
      'config.promptedValues.PIN',
      'plan.resolvedVariables.TOKEN.value',
      'config.variables.TOKEN',
    ]);
    for (const value of found) {
      expect(value.prefix).toBe('enc:');
      expect(value.stored).toBe(`enc:${value.ciphertext}`);
      expect(value.context).toBe('deployment-variable');
      expect(cipher.decrypt(value.ciphertext, value.context)).toMatch(/^[tp]$/);
    }
  });

  it("finds a pending request's secret variables inside its draft", () => {
    const found = encryptedValues('pending_request', { draft: draft() });
    expect(found).toHaveLength(4);
    expect(found.every((v) => v.path[0] === 'draft')).toBe(true);
  });

  it("finds a command's sealed secret variables only, and none on a command made before sealing", () => {
    // Prepare
    const command = { variables: { TOKEN: variable('t'), REGION: 'eu' }, secretVariables: ['TOKEN'] };

    // Act
    const sealedOnes = encryptedValues('command', { ...command, sealedSecrets: true });
    const before = encryptedValues('command', command);

    // Assess
    expect(sealedOnes.map((v) => v.path)).toEqual([['variables', 'TOKEN']]);
    expect(before).toEqual([]);
  });

  it("finds the analysis provider's API key among the settings' overrides", () => {
    const key = sealed('sk-123', 'analysis-provider-api-key');
    expect(encryptedValues('analysis_settings', { overrides: { provider_api_key: key, model: 'x' } })).toMatchObject([
      { path: ['overrides', 'provider_api_key'], context: 'analysis-provider-api-key', keyId: 'k1' },
    ]);
    expect(encryptedValues('analysis_settings', { overrides: { provider_api_key: null } })).toEqual([]);
  });

  it("finds an identity provider's client secret under its id", () => {
    const secret = sealed('idp-secret', 'idp:p1');
    expect(encryptedValues('identity_provider', { id: 'p1', clientSecret: secret })).toMatchObject([
      { path: ['clientSecret'], context: 'idp:p1', keyId: 'k1' },
    ]);
  });

  it("finds a trigger's signing secret and its sealed saved values, both under the trigger's context", () => {
    const secret = sealed('whsec_x', 'trigger:t1');
    const values = sealed('{"variables":{"A":"b"}}', 'trigger:t1');
    expect(
      encryptedValues('trigger', {
        id: 't1',
        sealedSecret: secret,
        request: { action_id: 'a', sealed_values: values },
      }),
    ).toMatchObject([
      { path: ['sealedSecret'], context: 'trigger:t1' },
      { path: ['request', 'sealed_values'], context: 'trigger:t1' },
    ]);
    expect(encryptedValues('trigger', { id: 't1', sealedSecret: secret, request: { action_id: 'a' } })).toHaveLength(1);
  });

  it("finds a webhook subscription's signing secret under the subscription's context", () => {
    const secret = sealed('whsec_y', 'webhook:w1');
    expect(encryptedValues('webhook', { id: 'w1', sealedSecret: secret })).toMatchObject([
      { path: ['sealedSecret'], context: 'webhook:w1', keyId: 'k1' },
    ]);
  });

  it('reads the key id of the v1 format only, and counts anything else as unreadable', () => {
    expect(keyIdOf('v1.rot-2.aaa.bbb.ccc')).toBe('rot-2');
    expect(keyIdOf('v2.k.a.b.c')).toBeUndefined();
    expect(keyIdOf('plain text')).toBeUndefined();
    expect(
      valuesByKey([
        ...encryptedValues('user', { id: 'u', twoFactor: { secret: 'v1.k2.a.b.c' } }),
        ...encryptedValues('user', { id: 'u', twoFactor: { secret: 'v1.k2.d.e.f' } }),
        ...encryptedValues('user', { id: 'u', twoFactor: { secret: 'garbage' } }),
      ]),
    ).toEqual({ k2: 2, [UNREADABLE]: 1 });
  });
});
