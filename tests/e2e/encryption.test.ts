// Admin: encryption over HTTP: the stats count the secrets the service stores (a user's TOTP secret, a deployment's
// secret variable) by key id without showing a key; verify decrypts them with the key given alone (right key, wrong
// key), refuses a malformed key without counting it, allows one attempt per hour per caller; callers without the
// permissions get 403.
import { beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';
import { useStack } from '../support/stack-fixture.js';

const e2e = useStack('enc');
let keyEntry: string; // the stack's one key, `<id>:<base64>`

const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { ...(token === undefined ? {} : { token }), body });
const login = async (email: string, password: string) => (await api.login({ email, password })).token;
const stats = async (token = e2e.admin) => {
  const reply = await call('GET', '/admin/encryption/stats', token);
  expect(reply.status).toBe(200);
  return reply.json;
};
const table = (json: { tables: Record<string, unknown>[] }, type: string) =>
  json.tables.find((t) => t.record_type === type) as { records: number; values: number; keys: unknown[] };

beforeAll(async () => {
  keyEntry = e2e.stack.env['ENCRYPTION_KEYS']!.split(',')[0]!;
});

describe('GET /admin/encryption/stats', () => {
  it('counts the secrets stored under the active key, before and after new ones, never showing a key', async () => {
    // Prepare
    const keyId = keyEntry.split(':')[0]!;
    const before = await stats();
    await createUser('totp-enc@example.com', 'totp-password', ['user']);
    const user = await login('totp-enc@example.com', 'totp-password');
    const action = await call('POST', '/actions', e2e.admin, {
      slug: 'with-secret',
      name: 'With a secret',
      version: { version: '1.0.0', script: 'echo', variables: [{ name: 'API_TOKEN', secret: true, required: true }] },
    });
    const { token } = (await call('POST', '/targets/enrollment-tokens', e2e.admin, {})).json;
    const target = await call('POST', '/agent/register', undefined, {
      enrollment_token: token,
      name: 'enc-1',
      hostname: 'enc-1',
      os: 'linux',
      arch: 'x64',
      agent_version: '1.0.0',
      tags: [],
    });

    // Act
    expect((await call('POST', '/auth/2fa/setup', user)).status).toBe(200);
    const deployment = await call('POST', '/deployments', e2e.admin, {
      action_id: action.json.id,
      target_ids: [target.json.target_id],
      variables: { API_TOKEN: 'hunter2-enc' },
    });
    // The engine hands the step to the target as a command carrying the secret sealed: wait for it, so that the
    // set of secrets stays the same from here on (no agent runs it, nothing retries).
    let after = await stats();
    for (const deadline = Date.now() + 20_000; table(after, 'command').records === 0 && Date.now() < deadline;)
      after = await new Promise((resolve) => setTimeout(resolve, 200)).then(() => stats());

    // Assess
    expect([action.status, target.status, deployment.status]).toEqual([201, 201, 201]);
    expect(before.active_key_id).toBe(keyId);
    expect(table(before, 'user').records).toBe(0);
    expect(table(before, 'deployment').records).toBe(0);
    expect(table(before, 'signing_key').records).toBe(1); // the login's signing key
    expect(table(after, 'user')).toEqual({
      record_type: 'user',
      records: 1,
      values: 1,
      retired_records: 0,
      retired_values: 0,
      keys: [{ key_id: keyId, status: 'active', records: 1, values: 1 }],
    });
    // the secret variable as given and as resolved in the plan
    expect(table(after, 'deployment')).toMatchObject({ records: 1, values: 2, retired_values: 0 });
    expect(table(after, 'command')).toMatchObject({ records: 1, values: 1 });
    expect(after.keys).toEqual([
      { key_id: keyId, status: 'active', records: after.total.records, values: after.total.values },
    ]);
    expect(after.removable_key_ids).toEqual([]);
    expect(after.total.retired_records).toBe(0);
    expect(JSON.stringify(after)).not.toContain(keyEntry.split(':')[1]!);
  });
});

describe('POST /admin/encryption/verify', () => {
  it('decrypts every value with the right key, fails them with a wrong one, answering counts only', async () => {
    // Prepare
    const [keyId, key] = keyEntry.split(':') as [string, string];
    await createUser('admin-2@example.com', 'admin-2-password', ['admin']);
    const second = await login('admin-2@example.com', 'admin-2-password');
    const wrong = `${keyId}:${Buffer.alloc(32, 7).toString('base64')}`;
    const expected = (await stats()).total.values;

    // Act
    const right = await call('POST', '/admin/encryption/verify', e2e.admin, { key: `${keyId}:${key}` });
    const wrongReply = await call('POST', '/admin/encryption/verify', second, { key: wrong });

    // Assess
    expect(right.status).toBe(200);
    expect(right.json).toMatchObject({
      key_id: keyId,
      result: 'ok',
      decrypts_all: true,
      in_keyring: true,
      checked: expected,
      ok: expected,
      failed: 0,
    });
    expect(right.json.tables.find((t: { record_type: string }) => t.record_type === 'user')).toEqual({
      record_type: 'user',
      checked: 1,
      ok: 1,
      failed: 0,
    });
    expect(wrongReply.status).toBe(200);
    expect(wrongReply.json).toMatchObject({ result: 'failed', decrypts_all: false, ok: 0, failed: expected });
    expect(right.text + wrongReply.text).not.toContain('hunter2-enc');
    expect(right.text).not.toContain(key);
  });

  it('refuses a malformed key with 400 without counting it, and a second attempt within the hour with 429', async () => {
    // Prepare
    await createUser('admin-3@example.com', 'admin-3-password', ['admin']);
    const third = await login('admin-3@example.com', 'admin-3-password');
    const malformed = [
      { key: 'no-colon' },
      { key: `k1:${Buffer.alloc(16).toString('base64')}` }, // 16 bytes
      { key: `bad.id:${Buffer.alloc(32).toString('base64')}` },
      { key: 'k1:!!!!' },
      { key: 42 },
      {},
    ];

    // Act
    const refused = [];
    for (const body of malformed) refused.push(await call('POST', '/admin/encryption/verify', third, body));
    const first = await call('POST', '/admin/encryption/verify', third, { key: keyEntry });
    const again = await call('POST', '/admin/encryption/verify', third, { key: keyEntry });

    // Assess
    expect(refused.map((r) => r.status)).toEqual([400, 400, 400, 400, 400, 400]);
    expect(refused.slice(0, 5).map((r) => r.json.error.code)).toEqual(Array(5).fill('VALIDATION_ERROR'));
    expect(refused[5]!.json.error.code).toBe('MISSING_FIELD');
    expect(refused[1]!.text).not.toContain(Buffer.alloc(16).toString('base64'));
    expect(first.status).toBe(200);
    expect(again.status).toBe(429);
    expect(again.json.error).toMatchObject({ code: 'AUTH_RATE_LIMIT_EXCEEDED', reason: 'too_many_key_verifications' });
    expect(again.json.error.retry_after_secs).toBeGreaterThan(3500);
    expect(again.json.error.retry_after_secs).toBeLessThanOrEqual(3600);
    expect(again.headers.get('retry-after')).toBe(String(again.json.error.retry_after_secs));
  });
});

describe('permissions', () => {
  it('answers 403 to a caller without encryption:read or encryption:verify', async () => {
    // Prepare
    await createUser('operator-enc@example.com', 'operator-password', ['operator']);
    const operator = await login('operator-enc@example.com', 'operator-password');

    // Act
    const read = await call('GET', '/admin/encryption/stats', operator);
    const verify = await call('POST', '/admin/encryption/verify', operator, { key: keyEntry });

    // Assess
    expect([read.status, read.json.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    expect([verify.status, verify.json.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    expect(read.json.error.details.required).toBe('encryption:read');
    expect(verify.json.error.details.required).toBe('encryption:verify');
  });
});
