// Two-factor recovery codes over HTTP against the local stack (issue 38): issued once with 2FA, single use at
// sign-in (also under concurrency), replaced together, counted by the code lockout, removed with 2FA, and stored
// only as hashes. Each attack is refused with the spec's envelope and leaves the codes as they were.
import { request as httpRequest } from 'node:http';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import * as oauth from 'oauth4webapi';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../../../infra/dynamodb/keys.js';
import { startStack, type Stack } from '../../../local/stack.js';
import { dynamoClient, uniqueName } from '../../support/aws.js';
import { apiClient } from '../../support/http.js';
import { pageSession } from '../../support/oauth-page.js';
import { createUser } from '../../support/users.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const FORMAT = /^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$/;
let stack: Stack;

const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
  api.call(method, `/api/v1${path}`, token === undefined ? { body } : { token, body });

interface RawReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** A POST from a given local address: the local front takes the connecting address as the client's. */
const postFrom = (localAddress: string, path: string, body: unknown) =>
  new Promise<RawReply>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: stack.port,
        path: `/api/v1${path}`,
        method: 'POST',
        localAddress,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let answer = '';
        res.on('data', (chunk) => (answer += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: JSON.parse(answer) }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });

/** Each attempt from an address of its own: the per-user limit is what is proved, not the per-address one. */
let addressNumber = 0;
const nextAddress = () => {
  addressNumber += 1;
  return `127.0.${40 + Math.floor(addressNumber / 250)}.${(addressNumber % 250) + 1}`;
};

const step = () => Math.floor(Date.now() / 30_000);
const codeAt = (secret: string, s: number) => generate({ secret, epoch: s * 30 + 1 });
/** Waits out the last 3 s of a 30-s step, so a code computed here still matches when it arrives. */
const clearOfStepBoundary = async () => {
  const into = Date.now() % 30_000;
  if (into > 27_000) await new Promise((resolve) => setTimeout(resolve, 30_000 - into + 100));
};

/** The stored user item, read from DynamoDB directly. */
const storedUser = async (id: string) => {
  const db = DynamoDBDocumentClient.from(dynamoClient(stack.dynamoEndpoint));
  const { Item } = await db.send(
    new GetCommand({ TableName: stack.tables['MainTable']!, Key: keys.user(id), ConsistentRead: true }),
  );
  return Item as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
};

/** A user with 2FA on (enabled with the previous step's code, so the current one still works) and its codes. */
const twoFactorUser = async (name: string) => {
  const credentials = { email: `${name}@example.com`, password: `${name}-password` };
  const id = await createUser(credentials.email, credentials.password, ['user']);
  const token = (await api.login(credentials)).token;
  const secret = (await call('POST', '/auth/2fa/setup', token)).json.secret as string;
  await clearOfStepBoundary();
  const enabled = await call('POST', '/auth/2fa/enable', token, { code: await codeAt(secret, step() - 1) });
  expect(enabled.status).toBe(200);
  const pendingToken = async (): Promise<string> => {
    const reply = await call('POST', '/auth/login', undefined, credentials);
    expect(reply.json.requires_2fa).toBe(true);
    return reply.json.pending_token as string;
  };
  const verify = async (code: string, pending?: string) =>
    postFrom(nextAddress(), '/auth/2fa/verify', { code, pending_token: pending ?? (await pendingToken()) });
  const left = async () => (await call('GET', '/auth/me', token)).json.two_factor_recovery_codes_left as number;
  return {
    id,
    token,
    secret,
    enabled,
    codes: enabled.json.recovery_codes as string[],
    pendingToken,
    verify,
    left,
    rightCode: () => codeAt(secret, step()),
  };
};

beforeAll(async () => {
  stack = await startStack({ port: 0, namePrefix: `${uniqueName('recovery')}-`, bootstrapAdmin: ADMIN });
});

afterAll(async () => {
  await stack?.stop();
});

describe('recovery codes are shown once and stored as hashes', () => {
  it('enable answers 10 codes; no later answer shows one, and the stored item holds only hashes', async () => {
    // Prepare + Act
    const user = await twoFactorUser('ada');
    // Assess: 10 distinct codes in the enable answer
    expect(user.enabled.json).toMatchObject({ two_factor_enabled: true });
    expect(user.codes).toHaveLength(10);
    expect(new Set(user.codes).size).toBe(10);
    for (const code of user.codes) expect(code).toMatch(FORMAT);
    // ... never again: not in /auth/me (only the count), not in a login's answer
    const me = await call('GET', '/auth/me', user.token);
    expect(me.json).toMatchObject({ two_factor_enabled: true, two_factor_recovery_codes_left: 10 });
    const signedIn = await user.verify(await user.rightCode());
    expect(signedIn.status).toBe(200);
    for (const answer of [me.json, signedIn.json])
      for (const code of user.codes) expect(JSON.stringify(answer)).not.toContain(code);
    // ... and not in the database: 10 SHA-256 hashes, no code with or without its hyphen
    const item = await storedUser(user.id);
    const stored = JSON.stringify(item);
    for (const code of user.codes) {
      expect(stored).not.toContain(code);
      expect(stored).not.toContain(code.replace('-', ''));
    }
    const hashes = Object.keys(item['twoFactor']['recoveryCodes'] as object);
    expect(hashes).toHaveLength(10);
    for (const hash of hashes) expect(hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('a recovery code signs in once', () => {
  it('works in place of the authenticator code, then answers 401 on its second use', async () => {
    // Prepare
    const user = await twoFactorUser('bea');
    const code = user.codes[3]!;
    // Act
    const first = await user.verify(code.toUpperCase());
    const second = await user.verify(code);
    // Assess
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ token_type: 'Bearer', user: { id: user.id } });
    expect(await call('GET', '/auth/me', first.json.access_token as string)).toMatchObject({ status: 200 });
    expect([second.status, second.json.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    expect(await user.left()).toBe(9);
    // The other codes still work.
    expect((await user.verify(user.codes[4]!)).status).toBe(200);
    expect(await user.left()).toBe(8);
  });

  it('two concurrent uses of one code: one 200, one 401', async () => {
    // Prepare
    const user = await twoFactorUser('cyd');
    const code = user.codes[0]!;
    const tokens = [await user.pendingToken(), await user.pendingToken()];
    // Act
    const replies = await Promise.all(tokens.map((pending) => user.verify(code, pending)));
    // Assess
    expect(replies.map((r) => r.status).sort()).toEqual([200, 401]);
    expect(replies.find((r) => r.status === 401)?.json.error.code).toBe('INVALID_CREDENTIALS');
    expect(await user.left()).toBe(9);
    expect(Object.keys((await storedUser(user.id))['twoFactor']['recoveryCodes'] as object)).toHaveLength(9);
  });

  it('wrong recovery codes count toward the code lockout: the 11th attempt and then a right code answer 429', async () => {
    // Prepare
    const user = await twoFactorUser('dee');
    const tokens = [await user.pendingToken(), await user.pendingToken(), await user.pendingToken()];
    // Act: 5 + 5 + 1 wrong (well-formed) recovery codes, each from another address
    const replies = [];
    for (let i = 0; i < 11; i += 1) replies.push(await user.verify('zzzzz-zzzzz', tokens[Math.floor(i / 5)]));
    const right = await user.verify(user.codes[0]!);
    // Assess
    expect(replies.slice(0, 10).map((r) => r.status)).toEqual(Array(10).fill(401));
    const locked = replies[10] as RawReply;
    expect(locked.status).toBe(429);
    expect(locked.json.error).toMatchObject({
      code: 'AUTH_RATE_LIMIT_EXCEEDED',
      reason: 'too_many_failed_two_factor_codes',
    });
    expect([right.status, right.json.error.code]).toEqual([429, 'AUTH_RATE_LIMIT_EXCEEDED']);
    // The right code was not spent by the refused attempt.
    expect(await user.left()).toBe(10);
  });
});

describe('the OAuth authorization page takes a recovery code at its 2FA step', () => {
  it('a recovery code passes the 2FA step once; its second use gets the page again with 401', async () => {
    // Prepare: a public client, and a user with 2FA
    const admin = (await api.login(ADMIN)).token;
    const redirect = 'http://127.0.0.1:8765/callback';
    const client = await call('POST', '/admin/oauth-clients', admin, {
      name: 'Recovery page',
      grant_types: ['authorization_code'],
      redirect_uris: [redirect],
      scopes: ['deployments:read'],
      is_confidential: false,
    });
    expect(client.status).toBe(201);
    const user = await twoFactorUser('hal');
    const twoFactorStep = async () => {
      const query = {
        response_type: 'code',
        client_id: client.json.client_id as string,
        redirect_uri: redirect,
        code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
        code_challenge_method: 'S256',
        state: oauth.generateRandomState(),
      };
      const page = pageSession(() => stack.baseUrl);
      const opened = await page.open(query);
      expect(opened.status).toBe(200);
      const asked = await page.post({ ...opened.hidden, email: 'hal@example.com', password: 'hal-password' });
      expect([asked.status, asked.html.includes('or a recovery code')]).toEqual([200, true]);
      expect(asked.html).not.toContain('inputmode="numeric"');
      return { page, asked };
    };
    // Act
    const first = await twoFactorStep();
    const consent = await first.page.post({ ...first.asked.hidden, code: user.codes[2]! });
    const second = await twoFactorStep();
    const again = await second.page.post({ ...second.asked.hidden, code: user.codes[2]! });
    // Assess
    expect([consent.status, consent.html.includes('Allow access?')]).toEqual([200, true]);
    expect([again.status, again.html.includes('Two-factor code')]).toEqual([401, true]);
    expect(await user.left()).toBe(9);
  });
});

describe('recovery codes are replaced and removed only with the authenticator', () => {
  it('regenerate answers 10 new codes once; every old code stops working', async () => {
    // Prepare
    const user = await twoFactorUser('eli');
    // Act
    const replaced = await call('POST', '/auth/2fa/recovery-codes', user.token, { code: await user.rightCode() });
    // Assess
    expect(replaced.status).toBe(200);
    const fresh = replaced.json.recovery_codes as string[];
    expect(fresh).toHaveLength(10);
    for (const code of fresh) expect(code).toMatch(FORMAT);
    expect(fresh.filter((code) => user.codes.includes(code))).toEqual([]);
    const old = await user.verify(user.codes[0]!);
    expect([old.status, old.json.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    expect((await user.verify(fresh[0]!)).status).toBe(200);
    const me = await call('GET', '/auth/me', user.token);
    expect(me.json.two_factor_recovery_codes_left).toBe(9);
    for (const code of fresh) expect(JSON.stringify(me.json)).not.toContain(code);
  });

  it('a recovery code, a wrong code or an API key cannot regenerate or disable: 2FA and the codes stay', async () => {
    // Prepare
    const user = await twoFactorUser('fay');
    const before = Object.keys((await storedUser(user.id))['twoFactor']['recoveryCodes'] as object).sort();
    const key = await call('POST', '/auth/api-keys', user.token, { name: 'ci', scopes: ['deployments:read'] });
    expect(key.status).toBe(201);
    // Act
    const withRecovery = await call('POST', '/auth/2fa/recovery-codes', user.token, { code: user.codes[0] });
    const disableWithRecovery = await call('POST', '/auth/2fa/disable', user.token, { code: user.codes[1] });
    const withWrong = await call('POST', '/auth/2fa/recovery-codes', user.token, { code: '000000' });
    const asKey = await call('POST', '/auth/2fa/recovery-codes', key.json.full_key as string, {
      code: await user.rightCode(),
    });
    // Assess
    expect([withRecovery.status, withRecovery.json.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect([disableWithRecovery.status, disableWithRecovery.json.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(withWrong.status).toBe(400);
    expect(withWrong.json.error.code).toBe('VALIDATION_ERROR');
    expect([asKey.status, asKey.json.error.code, asKey.json.error.details.reason]).toEqual([
      403,
      'FORBIDDEN',
      'user_credentials_required',
    ]);
    const item = await storedUser(user.id);
    expect(item['twoFactor']['enabled']).toBe(true);
    expect(Object.keys(item['twoFactor']['recoveryCodes'] as object).sort()).toEqual(before);
    expect((await user.verify(user.codes[0]!)).status).toBe(200);
  });

  it('disable removes every code', async () => {
    // Prepare
    const user = await twoFactorUser('gus');
    // Act
    const disabled = await call('POST', '/auth/2fa/disable', user.token, { code: await user.rightCode() });
    // Assess
    expect(disabled.status).toBe(200);
    expect(await user.left()).toBe(0);
    const item = await storedUser(user.id);
    expect(item['twoFactor']).toMatchObject({ enabled: false, secret: null });
    expect(Object.keys((item['twoFactor']['recoveryCodes'] ?? {}) as object)).toEqual([]);
    // With 2FA off, regenerating has nothing to replace.
    const regenerate = await call('POST', '/auth/2fa/recovery-codes', user.token, { code: '123456' });
    expect([regenerate.status, regenerate.json.error.code]).toEqual([409, 'CONFLICT']);
  });
});
