// Idempotency-Key over HTTP against the real stack (DynamoDB Local, Powertools' persistence layer on the main table)
// with the local agents: a retried create never deploys twice.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalAgents, type LocalAgent } from '../../local/agents.js';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';
import { useStack } from '../support/stack-fixture.js';

const e2e = useStack('idem', { env: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '2000' } });
let other: string;
let dir: string;
let agents: readonly LocalAgent[] = [];
let actionId: string;

const api = apiClient(() => e2e.stack.baseUrl);
const create = (token: string, key: string | undefined, extra: Record<string, unknown> = {}) =>
  api.call('POST', '/api/v1/deployments', {
    token,
    body: { action_id: actionId, target_tags: [{ key: 'role', value: 'web' }], ...extra },
    ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
  });
const countOf = async (who: string) => {
  const list = await api.call('GET', '/api/v1/deployments?limit=100', { token: who });
  return (list.json.data as unknown[]).length;
};

beforeAll(async () => {
  await createUser('other@example.com', 'other-password', ['admin']);
  other = (await api.login({ email: 'other@example.com', password: 'other-password' })).token;
  dir = await mkdtemp(join(tmpdir(), 'deployer-idem-'));
  agents = await startLocalAgents(e2e.stack, dir, () => undefined);
  const action = await api.call('POST', '/api/v1/actions', {
    token: e2e.admin,
    body: { slug: 'hello', name: 'Say hello', version: { version: '1.0.0', script: 'echo hello' } },
  });
  expect(action.status).toBe(201);
  actionId = action.json.id;
}, 120_000);

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
  await rm(dir, { recursive: true, force: true });
});

describe('Idempotency-Key on POST /deployments', () => {
  it('the same key twice: one deployment, the first answer again with idempotent-replayed: true', async () => {
    const before = await countOf(e2e.admin);

    const first = await create(e2e.admin, 'same-twice');
    expect([first.status, first.json]).toEqual([201, expect.anything()]);
    const again = await create(e2e.admin, 'same-twice');

    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.json).toEqual(first.json);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await countOf(e2e.admin)).toBe(before + 1);
  });

  it('the same key with another body: 422 VALIDATION_ERROR naming the key, nothing created', async () => {
    await create(e2e.admin, 'other-body');
    const before = await countOf(e2e.admin);

    const reused = await create(e2e.admin, 'other-body', { version_requirement: '^1.0.0' });

    expect(reused.status).toBe(422);
    expect(reused.json.error.code).toBe('VALIDATION_ERROR');
    expect(reused.json.error.message).toContain('other-body');
    expect(await countOf(e2e.admin)).toBe(before);
  });

  it('two at once with one key: one runs, the other 409 CONFLICT (or the replay); a later retry answers the first', async () => {
    const before = await countOf(e2e.admin);

    const answers = await Promise.all([create(e2e.admin, 'concurrent'), create(e2e.admin, 'concurrent')]);
    const later = await create(e2e.admin, 'concurrent');

    const statuses = answers.map((a) => a.status).sort();
    const created = answers.find((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null);
    expect(created).toBeDefined();
    expect([
      [201, 201],
      [201, 409],
    ]).toContainEqual(statuses);
    const refused = answers.find((a) => a.status === 409);
    if (refused !== undefined) expect(refused.json.error.code).toBe('CONFLICT');
    expect([later.status, later.json, later.headers.get('idempotent-replayed')]).toEqual([201, created?.json, 'true']);
    expect(await countOf(e2e.admin)).toBe(before + 1);
  });

  it("another caller's same key is unrelated", async () => {
    const mine = await create(e2e.admin, 'shared-key');
    const theirs = await create(other, 'shared-key');

    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(theirs.json.deployment_id).not.toBe(mine.json.deployment_id);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
  });

  it('no key: every request creates (as before); an empty or too long key: 400, nothing created', async () => {
    const before = await countOf(e2e.admin);

    const a = await create(e2e.admin, undefined);
    const b = await create(e2e.admin, undefined);
    const tooLong = await create(e2e.admin, 'k'.repeat(256));

    expect([a.status, b.status, tooLong.status]).toEqual([201, 201, 400]);
    expect(b.json.deployment_id).not.toBe(a.json.deployment_id);
    expect(tooLong.json.error.code).toBe('VALIDATION_ERROR');
    expect(await countOf(e2e.admin)).toBe(before + 2);
  });

  it('POST /deployments/{id}/redeploy with one key twice: one redeploy', async () => {
    const original = await create(e2e.admin, 'redeploy-source');
    const id = original.json.deployment_id as string;
    const before = await countOf(e2e.admin);
    const redeploy = () =>
      api.call('POST', `/api/v1/deployments/${id}/redeploy`, {
        token: e2e.admin,
        body: {},
        headers: { 'idempotency-key': 'redeploy-1' },
      });

    const first = await redeploy();
    const again = await redeploy();

    expect([first.status >= 200 && first.status < 300, again.status]).toEqual([true, first.status]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await countOf(e2e.admin)).toBe(before + 1);
  });
});
