// Deploy triggers over HTTP with the local agents: a CI-style call signed with the `standardwebhooks` package starts
// a real deployment whose command sees the payload's value; GitHub's signature works too; filters, replays, stale
// timestamps, wrong signatures (counted, then 429), disabled triggers, inactive owners, rotated secrets, other
// users and API keys are refused; saved variable values are never shown and never stored in plain text.
import { createHmac, randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';
import { useStackWithAgents } from '../support/stack-with-agents.js';

const e2e = useStackWithAgents('trig');
let actionId: string;

const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, token: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { token, body });

/** A Standard Webhooks call, signed as any sender library would. */
const fire = async (
  trigger: { id: string; secret: string },
  payload: unknown,
  options: { id?: string; at?: Date; secret?: string; path?: string } = {},
) => {
  const body = JSON.stringify(payload);
  const id = options.id ?? `msg_${randomUUID()}`;
  const at = options.at ?? new Date();
  const signature = new Webhook(options.secret ?? trigger.secret).sign(id, at, body);
  const response = await fetch(`${e2e.stack.baseUrl}/api/v1/hooks/${options.path ?? trigger.id}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signature,
    },
    body,
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answers differ by status, as in tests/support/http.ts
  return { status: response.status, json: (await response.json()) as Record<string, any>, id };
};

const newTrigger = async (token: string, extra: Record<string, unknown> = {}) => {
  const created = await call('POST', '/triggers', token, {
    name: 'release from CI',
    request: {
      action_id: actionId,
      target_tags: [{ key: 'role', value: 'web' }],
      variables: { TAG: 'none', TOKEN: 'hunter2-very-secret' },
    },
    rules: { variables: { TAG: 'release.tag' } },
    filters: [{ field: 'ref', one_of: ['refs/heads/main'] }],
    ...extra,
  });
  expect([created.status, created.json.error]).toEqual([201, undefined]);
  return created.json as { id: string; short_id: string; secret: string; hook_url: string; updated_at: string };
};

const MAIN = { ref: 'refs/heads/main', release: { tag: '1.4.2' } };

beforeAll(async () => {
  const action = await call('POST', '/actions', e2e.admin, {
    slug: 'release',
    name: 'Release',
    version: {
      version: '1.0.0',
      script: 'echo "deploying $TAG"',
      variables: [
        { name: 'TAG', default: 'latest' },
        { name: 'TOKEN', secret: true },
      ],
    },
  });
  expect(action.status).toBe(201);
  actionId = action.json.id;
});

describe('deploy triggers', () => {
  it('starts a real deployment from a signed CI call, with the payload’s value reaching the command', async () => {
    const trigger = await newTrigger(e2e.admin);
    expect(trigger.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(trigger.hook_url).toBe(`http://localhost:${e2e.stack.port}/api/v1/hooks/${trigger.id}`);

    const fired = await fire(trigger, MAIN);
    expect([fired.status, fired.json.error]).toEqual([201, undefined]);
    const id = fired.json.deployment_id as string;
    let state = '';
    for (const until = Date.now() + 20_000; Date.now() < until && !['success', 'failed'].includes(state);) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      state = (await call('GET', `/deployments/${id}`, e2e.admin)).json.state;
    }
    expect(state).toBe('success');
    const history = (await call('GET', `/deployments/${id}/logs/history?limit=100`, e2e.admin)).json as {
      message?: string;
    }[];
    expect(JSON.stringify(history)).toContain('deploying 1.4.2');
    expect(JSON.stringify(history)).not.toContain('hunter2');

    const listed = (await call('GET', '/triggers', e2e.admin)).json as {
      id: string;
      last_triggered_at: string | null;
      updated_at: string;
    }[];
    const after = listed.find((t) => t.id === trigger.id)!;
    expect(after.last_triggered_at).toEqual(expect.any(String));
    // A call is not an edit: it leaves the trigger's revision (and updated_at) alone, so an edit racing it holds.
    expect(after.updated_at).toBe(trigger.updated_at);
  });

  it('skips a payload its filter does not match, and names a missing mapped value', async () => {
    const trigger = await newTrigger(e2e.admin);
    const skipped = await fire(trigger, { ref: 'refs/heads/feature', release: { tag: '9.9.9' } });
    expect([skipped.status, skipped.json.triggered]).toEqual([200, false]);
    expect(skipped.json.reason).toContain('refs/heads/feature');
    const missing = await fire(trigger, { ref: 'refs/heads/main' });
    expect([missing.status, missing.json.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(missing.json.error.message).toContain('release.tag');
  });

  it('refuses replays, stale timestamps and wrong signatures, and limits wrong signatures per trigger', async () => {
    const trigger = await newTrigger(e2e.admin, { filters: [{ field: 'ref', one_of: ['never'] }] });
    const first = await fire(trigger, MAIN);
    expect(first.status).toBe(200); // filtered out, but received
    const skippedAgain = await fire(trigger, MAIN, { id: first.id });
    expect(skippedAgain.status).toBe(200); // a filtered call records nothing: the sender may send it again

    const real = await newTrigger(e2e.admin);
    const fired = await fire(real, MAIN);
    expect([201, 202]).toContain(fired.status); // started, or queued behind another test's deployment
    const replay = await fire(real, MAIN, { id: fired.id });
    expect([replay.status, replay.json.error.code]).toEqual([409, 'CONFLICT']);
    const stale = await fire(real, MAIN, { at: new Date(Date.now() - 6 * 60_000) });
    expect([stale.status, stale.json.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    const forged = await fire(real, MAIN, { secret: 'whsec_' + Buffer.alloc(32, 7).toString('base64') });
    expect(forged.status).toBe(401);
    const unknown = await fire(real, MAIN, { path: randomUUID() });
    expect([unknown.status, unknown.json.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);

    const statuses: number[] = [];
    for (let i = 0; i < 11; i += 1)
      statuses.push((await fire(trigger, MAIN, { secret: 'whsec_' + Buffer.alloc(32, i).toString('base64') })).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses[10]).toBe(429);
  });

  it('accepts GitHub’s X-Hub-Signature-256 with its delivery id', async () => {
    const trigger = await newTrigger(e2e.admin);
    const body = JSON.stringify(MAIN);
    const send = (signature: string, delivery: string) =>
      fetch(`${e2e.stack.baseUrl}/api/v1/hooks/${trigger.short_id}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'push',
          'x-github-delivery': delivery,
          'x-hub-signature-256': signature,
        },
        body,
      });
    const good = `sha256=${createHmac('sha256', trigger.secret).update(body).digest('hex')}`;
    const delivery = randomUUID();
    expect([201, 202]).toContain((await send(good, delivery)).status);
    expect((await send(good, delivery)).status).toBe(409);
    expect((await send(`sha256=${'0'.repeat(64)}`, randomUUID())).status).toBe(401);
  });

  it('stops a disabled trigger, an inactive owner, a deleted trigger and a rotated secret', async () => {
    const ownerId = await createUser('ci-owner@example.com', 'ci-owner-password', ['admin']);
    const owner = (await api.login({ email: 'ci-owner@example.com', password: 'ci-owner-password' })).token;
    const trigger = await newTrigger(owner);

    expect((await call('POST', `/triggers/${trigger.id}/disable`, owner)).json.enabled).toBe(false);
    const disabled = await fire(trigger, MAIN);
    expect([disabled.status, disabled.json.error.details?.reason]).toEqual([403, 'trigger_disabled']);
    expect((await call('POST', `/triggers/${trigger.id}/enable`, owner)).json.enabled).toBe(true);

    const rotated = await call('POST', `/triggers/${trigger.id}/rotate-secret`, owner);
    expect(rotated.json.secret).not.toBe(trigger.secret);
    expect((await fire(trigger, MAIN)).status).toBe(401);
    expect([201, 202]).toContain((await fire({ id: trigger.id, secret: rotated.json.secret }, MAIN)).status);

    expect((await call('PATCH', `/admin/users/${ownerId}`, e2e.admin, { status: 'inactive' })).status).toBe(200);
    const inactive = await fire({ id: trigger.id, secret: rotated.json.secret }, MAIN);
    expect([inactive.status, inactive.json.error.details?.reason]).toEqual([403, 'account_not_active']);
    expect((await call('PATCH', `/admin/users/${ownerId}`, e2e.admin, { status: 'active' })).status).toBe(200);

    const again = (await api.login({ email: 'ci-owner@example.com', password: 'ci-owner-password' })).token;
    expect((await call('DELETE', `/triggers/${trigger.id}`, again)).status).toBe(204);
    expect((await fire({ id: trigger.id, secret: rotated.json.secret }, MAIN)).status).toBe(401);
  });

  it('keeps a saved secret when an edit sends its mask back, and replaces it when the edit types a new one', async () => {
    // Prepare: an action whose command shows the secret's length (never the secret), and a trigger saving it
    const action = await call('POST', '/actions', e2e.admin, {
      slug: 'masked-edit',
      name: 'Masked edit',
      version: {
        version: '1.0.0',
        script: 'echo "token has ${#TOKEN} characters, tag $TAG"',
        variables: [
          { name: 'TAG', default: 'latest' },
          { name: 'TOKEN', secret: true },
        ],
      },
    });
    expect(action.status).toBe(201);
    const trigger = await newTrigger(e2e.admin, {
      request: {
        action_id: action.json.id,
        target_tags: [{ key: 'role', value: 'web' }],
        variables: { TAG: 'none', TOKEN: 'hunter2-very-secret' },
      },
    });
    const output = async () => {
      const fired = await fire(trigger, MAIN);
      expect([fired.status, fired.json.error]).toEqual([201, undefined]);
      let state = '';
      for (const until = Date.now() + 20_000; Date.now() < until && !['success', 'failed'].includes(state);) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        state = (await call('GET', `/deployments/${fired.json.deployment_id}`, e2e.admin)).json.state;
      }
      expect(state).toBe('success');
      return JSON.stringify(
        (await call('GET', `/deployments/${fired.json.deployment_id}/logs/history`, e2e.admin)).json,
      );
    };
    // Act: the request sent back as read (masked), with only the target tags changed
    const read = (await call('GET', `/triggers/${trigger.id}`, e2e.admin)).json;
    expect(read.request.variables).toEqual({ TAG: '***', TOKEN: '***' });
    const kept = await call('PATCH', `/triggers/${trigger.id}`, e2e.admin, {
      request: { ...read.request, target_tags: [{ key: 'role', value: 'web' }], priority: 7 },
    });
    // Assess: saved, still masked, and the command still gets the 19-character secret
    expect([kept.status, kept.json.request.priority, kept.json.request.variables]).toEqual([
      200,
      7,
      { TAG: '***', TOKEN: '***' },
    ]);
    expect(await output()).toContain('token has 19 characters, tag 1.4.2');
    // Act: a new value typed for TOKEN, the mask kept for TAG
    const changed = await call('PATCH', `/triggers/${trigger.id}`, e2e.admin, {
      request: { ...read.request, variables: { TAG: '***', TOKEN: 'abc' } },
    });
    expect(changed.status).toBe(200);
    expect(await output()).toContain('token has 3 characters, tag 1.4.2');
    // Act: the mask under a name with no saved value is refused, and nothing changes
    const refused = await call('PATCH', `/triggers/${trigger.id}`, e2e.admin, {
      request: { ...read.request, variables: { TOKEN: '***', OTHER: '***' } },
    });
    expect([refused.status, refused.json.error.details?.fields?.[0]?.field]).toEqual([400, 'request.variables.OTHER']);
    expect((await call('GET', `/triggers/${trigger.id}`, e2e.admin)).json.request.variables).toEqual({
      TAG: '***',
      TOKEN: '***',
    });
  }, 60_000);

  it('keeps a trigger to its owner, its values masked and sealed, and its secret away from API keys', async () => {
    const trigger = await newTrigger(e2e.admin);
    const shown = await call('GET', `/triggers/${trigger.id}`, e2e.admin);
    expect(shown.json.request.variables).toEqual({ TAG: '***', TOKEN: '***' });
    expect(shown.json.secret).toBeUndefined();

    // Stored sealed: the raw item holds neither the secret variable nor the signing secret.
    const { infra } = await import('../../functions/shared/wiring.js');
    const raw = await infra().db.send(
      new GetCommand({ TableName: infra().config.TABLE_NAME, Key: { pk: `TRIGGER#${trigger.id}`, sk: 'TRIGGER' } }),
    );
    expect(raw.Item).toBeDefined();
    expect(JSON.stringify(raw.Item)).not.toContain('hunter2');
    expect(JSON.stringify(raw.Item)).not.toContain(trigger.secret.slice(6));
    // ... and indexed for the encryption stats (both sealed values under the active key).
    expect(raw.Item?.['gsi4pk']).toMatch(/^ENC#/);
    expect(Object.values(raw.Item?.['encValues'] as Record<string, number>)).toEqual([2]);

    await createUser('other-deployer@example.com', 'other-password', ['admin']);
    const other = (await api.login({ email: 'other-deployer@example.com', password: 'other-password' })).token;
    expect((await call('GET', `/triggers/${trigger.id}`, other)).status).toBe(404);
    expect((await call('POST', `/triggers/${trigger.id}/rotate-secret`, other)).status).toBe(404);
    expect((await call('PATCH', `/triggers/${trigger.id}`, other, { enabled: false })).status).toBe(404);
    expect((await call('GET', '/triggers', other)).json).toEqual([]);

    const key = await call('POST', '/auth/api-keys', e2e.admin, { name: 'ci', scopes: ['deployments:create'] });
    const byKey = await call('POST', '/triggers', key.json.full_key, {
      name: 'x',
      request: { action_id: actionId, target_tags: [{ key: 'role', value: 'web' }] },
    });
    expect([byKey.status, byKey.json.error.details?.reason]).toEqual([403, 'user_credentials_required']);
    expect((await call('POST', `/triggers/${trigger.id}/rotate-secret`, key.json.full_key)).status).toBe(403);

    const override = await call('POST', '/triggers', e2e.admin, {
      name: 'sneaky',
      request: {
        action_id: actionId,
        target_tags: [{ key: 'role', value: 'web' }],
        override_freeze: true,
        override_reason: 'because',
      },
    });
    expect([override.status, override.json.error.code]).toEqual([400, 'VALIDATION_ERROR']);
  });
});
