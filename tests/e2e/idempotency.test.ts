// Idempotency-Key over HTTP against the real stack (DynamoDB Local, Powertools' persistence layer on the main table)
// with the local agents: a retried create never deploys twice.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteCommand, DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../../infra/dynamodb/keys.js';
import { startLocalAgents, type LocalAgent } from '../../local/agents.js';
import { dynamoClient } from '../support/aws.js';
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
/**
 * Forgets every Idempotency-Key record of the user (Powertools' records): what a create that committed and then
 * answered 5xx leaves (its record is deleted with the error), so the retry runs again.
 */
const recordsOf = async (userId: string) => {
  const db = DynamoDBDocumentClient.from(dynamoClient(e2e.stack.dynamoEndpoint));
  const table = e2e.stack.env['TABLE_NAME']!;
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.idempotencyPartition(userId) },
    }),
  );
  return { db, table, Items };
};
const forgetRecords = async (userId: string) => {
  const { db, table, Items } = await recordsOf(userId);
  for (const item of Items)
    await db.send(new DeleteCommand({ TableName: table, Key: { pk: item['pk'], sk: item['sk'] } }));
  return Items.length;
};
/**
 * Puts every Idempotency-Key record of the user back in progress, held for ten minutes: what a create leaves when
 * it committed, answered 5xx, and Powertools could not delete its record (the retries find it in flight).
 */
const holdRecords = async (userId: string) => {
  const { db, table, Items } = await recordsOf(userId);
  for (const item of Items)
    await db.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: item['pk'], sk: item['sk'] },
        UpdateExpression: 'SET #status = :held, in_progress_expiration = :until REMOVE #data',
        ExpressionAttributeNames: { '#status': 'status', '#data': 'data' },
        ExpressionAttributeValues: { ':held': 'INPROGRESS', ':until': Date.now() + 600_000 },
      }),
    );
  return Items.length;
};
const adminId = async () => (await api.call('GET', '/api/v1/auth/me', { token: e2e.admin })).json.id as string;
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

  it('a redeploy retried while its key is held (its record left in progress) answers the first redeploy, no second', async () => {
    // Prepare: a redeploy that committed, its record put back in progress as after a 5xx it could not clear
    const userId = await adminId();
    const original = await create(e2e.admin, 'held-redeploy-source');
    await forgetRecords(userId);
    const redeploy = () =>
      api.call('POST', `/api/v1/deployments/${original.json.deployment_id as string}/redeploy`, {
        token: e2e.admin,
        body: {},
        headers: { 'idempotency-key': 'held-redeploy' },
      });
    const first = await redeploy();
    expect([201, 202]).toContain(first.status);
    expect(await holdRecords(userId)).toBe(1);
    const before = await countOf(e2e.admin);
    // Act
    const retry = await redeploy();
    // Assess: the same redeploy (or queued request), nothing new
    expect(retry.status).toBe(first.status);
    expect(retry.json.id ?? retry.json.pending_request_id).toBe(first.json.id ?? first.json.pending_request_id);
    expect(await countOf(e2e.admin)).toBe(before);
  });

  it('a retry of a create that committed but lost its answer (no record left): the same deployment, not a second', async () => {
    // Prepare: a create that committed, its Idempotency-Key record gone as after a 5xx
    const first = await create(e2e.admin, 'lost-answer');
    expect(first.status).toBe(201);
    expect(await forgetRecords(await adminId())).toBeGreaterThan(0);
    const before = await countOf(e2e.admin);
    // Act
    const retry = await create(e2e.admin, 'lost-answer');
    // Assess: the first deployment answered again (not a replay of a stored answer: there was none), nothing new
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.json.deployment_id).toBe(first.json.deployment_id);
    expect(retry.json.deployment).toMatchObject({
      id: first.json.deployment.id,
      short_id: first.json.deployment.short_id,
      created_at: first.json.deployment.created_at,
    });
    expect(await countOf(e2e.admin)).toBe(before);
    // and the same key for another body is still refused (422), nothing created
    await forgetRecords(await adminId());
    const reused = await create(e2e.admin, 'lost-answer', { version_requirement: '^1.0.0' });
    expect(reused.status).toBe(422);
    expect(await countOf(e2e.admin)).toBe(before);
  });

  it('a retry while the key is held by a create that committed (its record left in progress): that deployment, replayed', async () => {
    // Prepare: a create that committed, its Idempotency-Key record left in progress as after a 5xx it could not clear
    const userId = await adminId();
    await forgetRecords(userId);
    const first = await create(e2e.admin, 'held-key');
    expect(first.status).toBe(201);
    expect(await holdRecords(userId)).toBe(1);
    const before = await countOf(e2e.admin);
    // Act
    const retry = await create(e2e.admin, 'held-key');
    // Assess: what the held create made (as a claim answers any retry: not marked replayed); nothing new. Before,
    // this answered 409 for the hold's life.
    expect([retry.status, retry.headers.get('idempotent-replayed')]).toEqual([201, null]);
    expect(retry.json.deployment_id).toBe(first.json.deployment_id);
    expect(await countOf(e2e.admin)).toBe(before);
    // a held key with another body is still refused before anything runs
    const reused = await create(e2e.admin, 'held-key', { version_requirement: '^1.0.0' });
    expect(reused.status).toBe(422);
    expect(await countOf(e2e.admin)).toBe(before);
  });

  it('a retry of a queued create that lost its answer: the same pending request, even once an instance is free', async () => {
    // Prepare: no instance free, a keyed create queued, its record gone
    const { instances } = (await api.call('GET', '/api/v1/admin/orchestration', { token: e2e.admin })).json as {
      instances: number;
    };
    expect(
      (await api.call('PUT', '/api/v1/admin/orchestration', { token: e2e.admin, body: { instances: 0 } })).status,
    ).toBe(200);
    try {
      const first = await create(e2e.admin, 'lost-queued');
      expect(first.status).toBe(202);
      await forgetRecords(await adminId());
      // Act: retried while still queued, and again after the instances are back (it could start at once now)
      const retry = await create(e2e.admin, 'lost-queued');
      expect(
        (await api.call('PUT', '/api/v1/admin/orchestration', { token: e2e.admin, body: { instances } })).status,
      ).toBe(200);
      await forgetRecords(await adminId());
      const later = await create(e2e.admin, 'lost-queued');
      // Assess: both name the first request; one request in all for the key
      expect([retry.status, later.status]).toEqual([202, 202]);
      expect([retry.json.pending_request_id, later.json.pending_request_id]).toEqual([
        first.json.pending_request_id,
        first.json.pending_request_id,
      ]);
      const requests = (await api.call('GET', '/api/v1/deployments/pending', { token: e2e.admin })).json as {
        id: string;
      }[];
      expect(requests.filter((r) => r.id === first.json.pending_request_id)).toHaveLength(1);
    } finally {
      await api.call('PUT', '/api/v1/admin/orchestration', { token: e2e.admin, body: { instances } });
    }
  });

  it('a retry after the caller was moved to a tenant does not answer the global deployment its key made: 422', async () => {
    // Prepare: a global user's keyed create committed, its record gone; then the user moved into a tenant
    await createUser('mover@example.com', 'mover-password', ['admin']);
    const mover = await api.login({ email: 'mover@example.com', password: 'mover-password' });
    const first = await create(mover.token, 'moved-away');
    expect(first.status).toBe(201);
    const me = (await api.call('GET', '/api/v1/auth/me', { token: mover.token })).json as { id: string };
    await forgetRecords(me.id);
    const tenant = await api.call('POST', '/api/v1/tenants', {
      token: e2e.admin,
      body: { name: 'Moved', slug: 'moved' },
    });
    expect(
      (
        await api.call('PATCH', `/api/v1/admin/users/${me.id}`, {
          token: e2e.admin,
          body: { tenant_id: tenant.json.id },
        })
      ).status,
    ).toBe(200);
    // Act
    const retry = await create(mover.token, 'moved-away');
    // Assess: refused, naming the key; the global deployment is not shown to the tenant's caller
    expect(retry.status).toBe(422);
    expect(JSON.stringify(retry.json)).not.toContain(first.json.deployment_id as string);
    expect(retry.json.error.message).toContain('moved-away');
  });
});
