import { describe, expect, it } from 'vitest';
import { ConfigurationError as DomainConfigurationError } from '../../../domain/errors.js';
import { ConfigurationError, parseConfig, requireEncryptionKeys, type Config } from '../../../infra/config.js';

const requireEncryptionKeysMessage = (): string => {
  try {
    requireEncryptionKeys({} as Config);
    return '';
  } catch (error) {
    return (error as Error).message;
  }
};

describe('parseConfig', () => {
  it('names every missing or malformed variable at once', () => {
    const attempt = () => parseConfig({ DISPATCH_QUEUE_URL: 'not a url' });
    expect(attempt).toThrow(ConfigurationError);
    try {
      attempt();
    } catch (error) {
      expect((error as ConfigurationError).problems).toEqual([
        'TABLE_NAME is missing',
        'DISPATCH_QUEUE_URL must be a queue URL',
        'ORCHESTRATOR_QUEUE_URL is missing',
      ]);
    }
  });

  it('is the spec’s CONFIGURATION_ERROR (500), its message naming the settings but never their values', () => {
    // Act
    let thrown: unknown;
    try {
      parseConfig({ DISPATCH_QUEUE_URL: 'not a url', WEBHOOK_ALLOW_LOOPBACK: 'secret-looking-value' });
    } catch (error) {
      thrown = error;
    }
    // Assess
    expect(thrown).toBeInstanceOf(DomainConfigurationError);
    expect(thrown).toMatchObject({ code: 'CONFIGURATION_ERROR', kind: 'misconfigured' });
    const message = (thrown as Error).message;
    expect(message).toContain('TABLE_NAME is missing');
    expect(message).toContain('DISPATCH_QUEUE_URL is invalid');
    expect(message).toContain('WEBHOOK_ALLOW_LOOPBACK is invalid');
    expect(message).not.toContain('secret-looking-value');
    expect(message).not.toContain('not a url');
    expect(requireEncryptionKeysMessage()).toBe('The service is not configured: ENCRYPTION_KEYS is missing.');
  });

  it('applies defaults and freezes the result', () => {
    const cfg = parseConfig({
      TABLE_NAME: 'deployer-dev',
      DISPATCH_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/1/q',
      ORCHESTRATOR_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/1/o',
      ENCRYPTION_KEYS: 'k1:' + 'A'.repeat(43) + '=',
    });
    expect(cfg).toMatchObject({
      STAGE: 'local',
      AWS_REGION: 'us-east-1',
      SHORT_ID_MIN_LENGTH: 6,
      ACCESS_TOKEN_TTL_SECONDS: 3600,
      LOGIN_MAX_FAILURES: 10,
    });
    expect(Object.isFrozen(cfg)).toBe(true);
  });

  it('leaves the key ring to the functions that decrypt: they name it when it is missing', () => {
    const base = {
      TABLE_NAME: 't',
      DISPATCH_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/1/q',
      ORCHESTRATOR_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/1/o',
    };
    expect(() => requireEncryptionKeys(parseConfig(base))).toThrow('ENCRYPTION_KEYS is missing');
    expect(requireEncryptionKeys(parseConfig({ ...base, ENCRYPTION_KEYS: 'k1:abc' }))).toBe('k1:abc');
  });
});
