import { describe, expect, it } from 'vitest';
import { ConfigurationError, parseConfig } from '../../../infra/config.js';

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
        'ENCRYPTION_KEYS is missing',
      ]);
    }
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
});
