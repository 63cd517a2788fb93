// A stack whose configuration does not parse (a malformed setting, as a typo in the cloud's environment would be;
// docs/security.md rule 20, "No silent defaults"): every request that needs the configuration, public, credentialed,
// an auth route or a stream, answers the spec's 500 CONFIGURATION_ERROR naming the setting (never its value or a
// stack), without Retry-After (a retry does not help until an operator fixes it), and signs nobody in. A stack of its
// own: the configuration is read once per process (issue 30). The other startup problem, a cloud stage without
// PUBLIC_BASE_URL or EDGE_ORIGIN_SECRET, cannot be reached locally (STAGE is serverless.yml's `${sls:stage}`,
// resolved as `local`): tests/unit/functions/shared/edges.test.ts holds the shell to the same answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../../local/stack.js';
import { uniqueName } from '../../support/aws.js';
import { apiClient } from '../../support/http.js';

const MALFORMED = 'soon-not-a-number';
let stack: Stack;

const api = apiClient(() => stack.baseUrl);

beforeAll(async () => {
  // No bootstrap admin: creating it needs the configuration too.
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('errconfig')}-`,
    env: { OIDC_HTTP_TIMEOUT_MS: MALFORMED },
  });
});

afterAll(async () => {
  await stack?.stop();
});

const CONFIGURATION_ERROR = {
  error: {
    code: 'CONFIGURATION_ERROR',
    message: 'The service is not configured: OIDC_HTTP_TIMEOUT_MS is invalid.',
    details: { request_id: expect.any(String) },
  },
};

describe('a configuration that does not parse', () => {
  it('answers every kind of request 500 CONFIGURATION_ERROR naming the setting, never its value, without Retry-After', async () => {
    // Act
    const replies = [
      ['GET /health', await api.call('GET', '/api/v1/health')],
      [
        'POST /auth/login',
        await api.call('POST', '/api/v1/auth/login', { body: { email: 'a@b.example', password: 'x'.repeat(12) } }),
      ],
      ['GET /auth/sso/{id}', await api.call('GET', '/api/v1/auth/sso/00000000-0000-4000-8000-000000000000')],
      ['POST /tenants', await api.call('POST', '/api/v1/tenants', { token: 'x', body: { name: 'T', slug: 't' } })],
    ] as const;
    const stream = await fetch(`${stack.baseUrl}/api/v1/sse/targets?sse_token=x`);
    const streamBody = (await stream.json()) as unknown;
    // Assess
    for (const [name, reply] of replies) {
      expect([name, reply.status, reply.headers.get('retry-after')]).toEqual([name, 500, null]);
      expect(reply.json).toEqual(CONFIGURATION_ERROR);
      expect(reply.text).not.toContain(MALFORMED);
      expect(reply.text).not.toMatch(/at \w+ \(|node:internal|\/work\//);
    }
    expect([stream.status, stream.headers.get('retry-after')]).toEqual([500, null]);
    expect(streamBody).toEqual(CONFIGURATION_ERROR);
  });

  it('signs nobody in: the login answers no token and no cookie', async () => {
    // Act
    const login = await api.call('POST', '/api/v1/auth/login', {
      body: { email: 'admin@example.com', password: 'admin-password' },
    });
    // Assess
    expect(login.status).toBe(500);
    expect(login.json.access_token).toBeUndefined();
    expect(login.headers.getSetCookie()).toEqual([]);
  });
});
