// Attack test over HTTP against the real local stack whose rate-limit store cannot be reached (its table name
// points nowhere): auth routes refuse (503 with Retry-After) rather than let password guessing through unlimited,
// while other requests keep passing, as documented. Its own file: the stack's configuration is per process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../../local/stack.js';
import { uniqueName } from '../../support/aws.js';
import { apiClient } from '../../support/http.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
let stack: Stack;
const api = apiClient(() => stack.baseUrl);

beforeAll(async () => {
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('sec-limiter')}-`,
    bootstrapAdmin: ADMIN,
    env: { RATE_LIMIT_TABLE_NAME: 'no-such-rate-limit-table' },
  });
});

afterAll(async () => {
  await stack?.stop();
});

describe('the rate limiter’s store is unreachable', () => {
  it('answers login, refresh and 2FA verify 503 SERVICE_UNAVAILABLE with Retry-After', async () => {
    for (const [path, body] of [
      ['/api/v1/auth/login', ADMIN],
      ['/api/v1/auth/refresh', {}],
      ['/api/v1/auth/2fa/verify', { pending_token: 'x', code: '123456' }],
    ] as const) {
      const reply = await api.call('POST', path, { body });
      expect([path, reply.status, reply.json?.error?.code]).toEqual([path, 503, 'SERVICE_UNAVAILABLE']);
      expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });

  it('lets other requests through', async () => {
    const health = await api.call('GET', '/api/v1/health');
    expect(health.status).toBe(200);
    const unauthenticated = await api.call('GET', '/api/v1/targets');
    expect(unauthenticated.status).toBe(401);
    // signing out of this browser only takes access away: never refused for the limiter
    const signOut = await api.call('DELETE', '/api/v1/auth/session', { cookie: 'deployer_refresh=unknown' });
    expect(signOut.status).toBe(200);
  });
});
