// Identity over HTTP against the stack `npm start` runs: the bootstrap admin logs in, every authentication error
// code is provoked, the refresh cookie rotates and its reuse revokes the family, logout stops tokens at once,
// failed logins lock an address out, and every protected route refuses callers without a credential.
import { request as httpRequest } from 'node:http';
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allRoutes } from '../../functions/http/routes.js';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ port: 0, namePrefix: `${uniqueName('auth')}-`, bootstrapAdmin: ADMIN });
});

afterAll(async () => {
  await stack?.stop();
});

const api = apiClient(() => stack.baseUrl);
const call = api.call;
const login = (credentials = ADMIN) => api.login(credentials);

describe('login and the access token', () => {
  it('logs the bootstrap admin in and sets a strict, HttpOnly refresh cookie on the auth path', async () => {
    const { body, setCookie, token } = await login();
    expect(body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 3600,
      user: { email: ADMIN.email, roles: ['admin'], status: 'active' },
    });
    expect(body.user.permissions).toHaveLength(57);
    expect(setCookie).toMatch(/^deployer_refresh=[\w-]{40,};/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain('Path=/api/v1/auth');
    expect(setCookie).not.toContain('Secure'); // plain-HTTP localhost
    const me = await call('GET', '/api/v1/auth/me', { token });
    expect(me.status).toBe(200);
    expect(me.json).toMatchObject({ email: ADMIN.email, email_verified: true, two_factor_enabled: false });
    expect(me.json.last_login_at).toEqual(expect.any(String));
  });

  it('signs tokens with a key published at /oauth/jwks', async () => {
    const { token } = await login();
    const jwks = await call('GET', '/oauth/jwks');
    expect(jwks.status).toBe(200);
    const { kid, alg } = decodeProtectedHeader(token);
    expect(alg).toBe('ES256');
    expect(jwks.json.keys).toContainEqual(expect.objectContaining({ kid, kty: 'EC', crv: 'P-256', use: 'sig' }));
    expect(JSON.stringify(jwks.json)).not.toMatch(/"d":/); // no private part
  });

  it.each([
    ['no Authorization header', 401, 'MISSING_AUTH_HEADER', {}],
    ['an empty Authorization header', 401, 'UNAUTHORIZED', { header: '' }],
    ['a non-Bearer header', 401, 'INVALID_AUTH_HEADER', { header: 'Basic YWRtaW46YWRtaW4=' }],
    ['a malformed token', 401, 'INVALID_TOKEN', { token: 'not.a.jwt' }],
    ['an unknown API key', 401, 'INVALID_CREDENTIALS', { token: 'dpl_doesnotexist' }],
  ])('answers %s with %i %s', async (_label, status, code, options) => {
    const reply = await call('GET', '/api/v1/auth/me', options);
    expect(reply.status).toBe(status);
    expect(reply.json.error.code).toBe(code);
  });

  it('answers INVALID_TOKEN for a tampered signature and TOKEN_EXPIRED for an expired token', async () => {
    const { token } = await login();
    const [header, payload, signature] = token.split('.');
    const tampered = `${header}.${payload}.${signature!.slice(0, -4)}AAAA`;
    expect((await call('GET', '/api/v1/auth/me', { token: tampered })).json.error.code).toBe('INVALID_TOKEN');
    // An expired token signed by the service's own key (the stack runs in this process, with its configuration).
    const { tokenService } = await import('../../functions/shared/identity-wiring.js');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as { sub: string };
    const expired = await tokenService().issue(
      { type: 'access', userId: claims.sub, tenantId: null, issuedAt: Date.now() - 7_200_000 },
      3600,
    );
    const reply = await call('GET', '/api/v1/auth/me', { token: expired });
    expect(reply.status).toBe(401);
    expect(reply.json.error.code).toBe('TOKEN_EXPIRED');
  });

  it('answers INVALID_CREDENTIALS for a wrong password and VALIDATION_ERROR for a bad email', async () => {
    const wrong = await call('POST', '/api/v1/auth/login', { body: { email: ADMIN.email, password: 'nope' } });
    expect(wrong.status).toBe(401);
    expect(wrong.json.error.code).toBe('INVALID_CREDENTIALS');
    const bad = await call('POST', '/api/v1/auth/login', { body: { email: 'not-an-email', password: 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.details.fields[0].field).toBe('email');
    const broken = await call('POST', '/api/v1/auth/login', { body: '{"email":' });
    expect(broken.json.error.code).toBe('INVALID_BODY');
  });
});

describe('refresh and logout', () => {
  it('rotates the refresh cookie, and a reused one revokes every session of that login', async () => {
    // Prepare
    const first = await login();
    // Act
    const refreshed = await call('POST', '/api/v1/auth/refresh', { cookie: first.cookie });
    const second = refreshed.headers.getSetCookie()[0]?.split(';')[0] ?? '';
    const reused = await call('POST', '/api/v1/auth/refresh', { cookie: first.cookie });
    const afterReuse = await call('POST', '/api/v1/auth/refresh', { cookie: second });
    // Assess
    expect(refreshed.status).toBe(200);
    expect(refreshed.json.access_token).toEqual(expect.any(String));
    expect(second).not.toBe(first.cookie);
    expect(reused.status).toBe(401);
    expect(reused.json.error.code).toBe('INVALID_TOKEN');
    expect(afterReuse.status).toBe(401);
  });

  it('answers 401 without a refresh cookie', async () => {
    const reply = await call('POST', '/api/v1/auth/refresh');
    expect(reply.status).toBe(401);
    expect(reply.json.error.code).toBe('INVALID_TOKEN');
  });

  it('logout revokes every access and refresh token of the user at once', async () => {
    const a = await login();
    const b = await login();
    const out = await call('POST', '/api/v1/auth/logout', { token: a.token });
    expect(out.status).toBe(200);
    expect(out.json.message).toEqual(expect.any(String));
    for (const token of [a.token, b.token])
      expect((await call('GET', '/api/v1/auth/me', { token })).json.error.code).toBe('INVALID_TOKEN');
    expect((await call('POST', '/api/v1/auth/refresh', { cookie: b.cookie })).status).toBe(401);
    const again = await login();
    expect((await call('GET', '/api/v1/auth/me', { token: again.token })).status).toBe(200);
  });
});

describe('sign out of this browser (DELETE /auth/session, additive)', () => {
  it("ends only this browser's refresh-token family and clears the cookie; another browser still refreshes", async () => {
    // Prepare: two browsers of one user, this one rotated once (its family, not only its first token, must end)
    const here = await login();
    const other = await login();
    const rotated = await call('POST', '/api/v1/auth/refresh', { cookie: here.cookie });
    const hereNow = rotated.headers.getSetCookie()[0]?.split(';')[0] ?? '';
    // Act
    const out = await call('DELETE', '/api/v1/auth/session', { cookie: hereNow });
    // Assess
    expect(out.status).toBe(200);
    expect(out.json.message).toContain('this browser');
    expect(out.headers.getSetCookie()[0]).toMatch(/^deployer_refresh=; .*Max-Age=0/);
    expect((await call('POST', '/api/v1/auth/refresh', { cookie: hereNow })).status).toBe(401);
    const otherRefresh = await call('POST', '/api/v1/auth/refresh', { cookie: other.cookie });
    expect(otherRefresh.status).toBe(200);
    expect((await call('GET', '/api/v1/auth/me', { token: other.token })).status).toBe(200);
    // the access token this browser held lives to its expiry (security.md rule 44)
    expect((await call('GET', '/api/v1/auth/me', { token: here.token })).status).toBe(200);
  });

  it('answers 200 and clears the cookie with no, an unknown or an already ended session', async () => {
    const none = await call('DELETE', '/api/v1/auth/session');
    expect(none.status).toBe(200);
    expect(none.headers.getSetCookie()[0]).toMatch(/Max-Age=0/);
    const unknown = await call('DELETE', '/api/v1/auth/session', { cookie: 'deployer_refresh=nope' });
    expect(unknown.status).toBe(200);
    const a = await login();
    expect((await call('DELETE', '/api/v1/auth/session', { cookie: a.cookie })).status).toBe(200);
    expect((await call('DELETE', '/api/v1/auth/session', { cookie: a.cookie })).status).toBe(200);
    expect((await call('POST', '/api/v1/auth/refresh', { cookie: a.cookie })).status).toBe(401);
  });
});

describe('protected routes', () => {
  const sample = (path: string) => path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');

  it('every route that is not public answers 401 MISSING_AUTH_HEADER without a credential', async () => {
    const protectedRoutes = allRoutes().filter((r) => r.handler.spec.permission !== 'public');
    expect(protectedRoutes.length).toBeGreaterThan(2);
    for (const route of protectedRoutes) {
      const reply = await call(route.method, sample(route.path), route.method === 'GET' ? {} : { body: {} });
      expect([route.path, reply.status, reply.json?.error?.code]).toEqual([route.path, 401, 'MISSING_AUTH_HEADER']);
    }
  });

  it('a permission-guarded route answers 403 INSUFFICIENT_PERMISSIONS to a caller without the permission', async () => {
    await createUser('viewer@example.com', 'viewer-password', ['user']); // holds no roles:read
    const viewer = await login({ email: 'viewer@example.com', password: 'viewer-password' });
    const admin = await login();
    const guarded = allRoutes().filter(
      (r) =>
        r.handler.spec.permission.includes(':') && !viewer.body.user.permissions.includes(r.handler.spec.permission),
    );
    expect(guarded.length).toBeGreaterThan(0);
    for (const route of guarded) {
      const denied = await call(route.method, sample(route.path), { token: viewer.token });
      expect([route.path, denied.status, denied.json.error.code]).toEqual([
        route.path,
        403,
        'INSUFFICIENT_PERMISSIONS',
      ]);
    }
    const allowed = await call('GET', '/api/v1/admin/permissions', { token: admin.token });
    expect(allowed.status).toBe(200);
    expect(allowed.json.flatMap((g: { permissions: unknown[] }) => g.permissions)).toHaveLength(57);
  });
});

describe('failed-login lockout', () => {
  /** A request from another loopback address: the limit is per client address. */
  const loginFrom = (localAddress: string, password: string) =>
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; json: any }>(
      (resolve, reject) => {
        const body = JSON.stringify({ email: ADMIN.email, password });
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port: stack.port,
            path: '/api/v1/auth/login',
            method: 'POST',
            localAddress,
            headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.50' },
          },
          (res) => {
            let text = '';
            res.on('data', (chunk) => (text += chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: JSON.parse(text) }));
          },
        );
        req.on('error', reject);
        req.end(body);
      },
    );

  it('locks an address out after 10 failed logins with the spec 429, while other addresses still log in', async () => {
    for (let i = 0; i < 10; i += 1) expect((await loginFrom('127.0.0.2', 'wrong')).status).toBe(401);
    const locked = await loginFrom('127.0.0.2', 'wrong');
    expect(locked.status).toBe(429);
    expect(locked.json.error).toMatchObject({
      code: 'AUTH_RATE_LIMIT_EXCEEDED',
      reason: expect.any(String),
      retry_after_secs: expect.any(Number),
    });
    expect(locked.headers['retry-after']).toBe(String(locked.json.error.retry_after_secs));
    expect(locked.headers['x-ratelimit-remaining']).toBe('0');
    expect(locked.headers['content-type']).toContain('application/json');
    // The right password does not help while locked, and a forged X-Forwarded-For does not reset the limit.
    expect((await loginFrom('127.0.0.2', ADMIN.password)).status).toBe(429);
    expect((await loginFrom('127.0.0.3', ADMIN.password)).status).toBe(200);
  });
});

describe('API keys over HTTP', () => {
  it('creates a key shown once, uses it, lists it without the secret, and revokes it', async () => {
    const { token } = await login();
    const created = await call('POST', '/api/v1/auth/api-keys', {
      token,
      body: { name: 'ci', description: 'pipeline', scopes: ['roles:read', 'api_keys:read'] },
    });
    expect(created.status).toBe(201);
    expect(created.json.full_key).toMatch(/^dpl_[0-9A-Za-z]{40}$/);
    expect(created.json.warning).toEqual(expect.any(String));
    const key = created.json.full_key as string;
    expect((await call('GET', '/api/v1/admin/permissions', { token: key })).status).toBe(200);
    expect(
      (await call('POST', '/api/v1/auth/api-keys', { token: key, body: { name: 'x', scopes: ['roles:read'] } })).json
        .error.code,
    ).toBe('INSUFFICIENT_PERMISSIONS');
    // Listing keys needs a user login (the key itself answers 403: tests/e2e/security/access.test.ts).
    const listed = await call('GET', '/api/v1/auth/api-keys', { token });
    expect(listed.status).toBe(200);
    expect(listed.json.api_keys).toContainEqual(
      expect.objectContaining({ id: created.json.api_key.id, key_prefix: key.slice(0, 12), last_used_ip: '127.0.0.1' }),
    );
    expect(JSON.stringify(listed.json)).not.toContain(key);
    const revoked = await call('DELETE', `/api/v1/auth/api-keys/${created.json.api_key.id}`, { token });
    expect(revoked.status).toBe(200);
    const after = await call('GET', '/api/v1/admin/permissions', { token: key });
    expect([after.status, after.json.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
  });

  it('refuses to create a key with an API key, and scopes beyond the creator', async () => {
    const { token } = await login();
    const created = await call('POST', '/api/v1/auth/api-keys', {
      token,
      body: { name: 'k', scopes: ['api_keys:create'] },
    });
    const withKey = await call('POST', '/api/v1/auth/api-keys', {
      token: created.json.full_key,
      body: { name: 'k2', scopes: ['api_keys:create'] },
    });
    expect([withKey.status, withKey.json.error.code]).toEqual([403, 'FORBIDDEN']);
    const unknown = await call('POST', '/api/v1/auth/api-keys', {
      token,
      body: { name: 'k3', scopes: ['everything:all'] },
    });
    expect([unknown.status, unknown.json.error.code]).toEqual([400, 'VALIDATION_ERROR']);
  });
});

describe('two-factor authentication over HTTP', () => {
  it('sets up, enables, asks for a code at login, refuses a replay, and disables', async () => {
    const { generate } = await import('otplib');
    // A user of its own, so the admin's logins elsewhere in this file are not affected.
    await createUser('totp@example.com', 'totp-password', ['user']);
    const credentials = { email: 'totp@example.com', password: 'totp-password' };
    const { token } = await login(credentials);
    const step = () => Math.floor(Date.now() / 30_000);
    const codeAt = (secret: string, s: number) => generate({ secret, epoch: s * 30 + 1 });

    // Setup: a base32 secret and an otpauth URL, not active yet.
    const setup = await call('POST', '/api/v1/auth/2fa/setup', { token });
    expect(setup.status).toBe(200);
    expect(setup.json.secret).toMatch(/^[A-Z2-7]{16,}=*$/);
    expect(setup.json.otpauth_url).toMatch(/^otpauth:\/\/totp\/.+secret=/);
    expect((await call('POST', '/api/v1/auth/login', { body: credentials })).json.access_token).toEqual(
      expect.any(String),
    );

    // Enable with a wrong code, then with the current one.
    expect((await call('POST', '/api/v1/auth/2fa/enable', { token, body: { code: '000000' } })).json.error.code).toBe(
      'VALIDATION_ERROR',
    );
    const secret = setup.json.secret as string;
    const enabledStep = step();
    const enabled = await call('POST', '/api/v1/auth/2fa/enable', {
      token,
      body: { code: await codeAt(secret, enabledStep) },
    });
    expect([enabled.status, enabled.json.error]).toEqual([200, undefined]);
    expect(enabled.json.two_factor_enabled).toBe(true);

    // Login now answers requires_2fa; the pending token is refused on regular endpoints.
    const pending = await call('POST', '/api/v1/auth/login', { body: credentials });
    expect(pending.json).toEqual({ requires_2fa: true, pending_token: expect.any(String) });
    expect(pending.headers.getSetCookie()).toEqual([]);
    const blocked = await call('GET', '/api/v1/auth/me', { token: pending.json.pending_token });
    expect([blocked.status, blocked.json.error.code]).toEqual([403, 'TWO_FACTOR_REQUIRED']);

    // The code used to enable is spent; the next step's code (accepted one step early) completes the login, once.
    const spent = await call('POST', '/api/v1/auth/2fa/verify', {
      body: { code: await codeAt(secret, enabledStep), pending_token: pending.json.pending_token },
    });
    expect([spent.status, spent.json.error?.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    const usedStep = enabledStep + 1;
    const nextCode = await codeAt(secret, usedStep);
    const verified = await call('POST', '/api/v1/auth/2fa/verify', {
      body: { code: nextCode, pending_token: pending.json.pending_token },
    });
    expect(verified.status).toBe(200);
    expect(verified.json.user.email).toBe('totp@example.com');
    expect(verified.headers.getSetCookie()[0]).toContain('deployer_refresh=');
    const replay = await call('POST', '/api/v1/auth/2fa/verify', {
      body: { code: nextCode, pending_token: pending.json.pending_token },
    });
    expect(replay.status).toBe(401);
    expect((await call('GET', '/api/v1/auth/me', { token: verified.json.access_token })).json.two_factor_enabled).toBe(
      true,
    );

    // Disabling needs a code newer than every one used: wait until usedStep is the real current step (replay protection).
    await new Promise((r) => setTimeout(r, Math.max(0, usedStep * 30_000 - Date.now() + 200)));
    const disabled = await call('POST', '/api/v1/auth/2fa/disable', {
      token: verified.json.access_token,
      body: { code: await codeAt(secret, usedStep + 1) },
    });
    expect(disabled.status).toBe(200);
    expect((await call('POST', '/api/v1/auth/login', { body: credentials })).json.access_token).toEqual(
      expect.any(String),
    );
  }, 60_000);
});

describe('SSE tokens over HTTP', () => {
  it('issues a single-use token with a session, renewable without an Authorization header', async () => {
    const { token } = await login();
    const issued = await call('POST', '/api/v1/auth/sse-token', { token, body: {} });
    expect(issued.status).toBe(200);
    expect(issued.json).toMatchObject({
      sse_token: expect.any(String),
      expires_in: 60,
      session_id: expect.any(String),
      refresh_token: expect.any(String),
    });
    const renewed = await call('POST', '/api/v1/auth/sse-token/refresh', {
      body: { session_id: issued.json.session_id, refresh_token: issued.json.refresh_token },
    });
    expect(renewed.status).toBe(200);
    expect(renewed.json.sse_token).not.toBe(issued.json.sse_token);
    const reused = await call('POST', '/api/v1/auth/sse-token/refresh', {
      body: { session_id: issued.json.session_id, refresh_token: issued.json.refresh_token },
    });
    expect([reused.status, reused.json.error.code]).toEqual([401, 'INVALID_TOKEN']);
    // A reused refresh token ends its session: the token the renewal minted no longer opens a stream
    // (tests/e2e/security/edges.test.ts follows the whole family). A new session's token is consumed once.
    const { identityDeps } = await import('../../functions/shared/identity-wiring.js');
    const { verifySseToken } = await import('../../domain/identity/sse-tokens.js');
    await expect(verifySseToken(identityDeps(), renewed.json.sse_token)).rejects.toMatchObject({
      code: 'INVALID_TOKEN',
    });
    const fresh = await call('POST', '/api/v1/auth/sse-token', { token, body: {} });
    await expect(verifySseToken(identityDeps(), fresh.json.sse_token)).resolves.toMatchObject({ kind: 'user' });
    await expect(verifySseToken(identityDeps(), fresh.json.sse_token)).rejects.toMatchObject({
      code: 'INVALID_TOKEN',
    });
  });
});
