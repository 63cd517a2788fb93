// Failure analysis over the local stack with the real agents: a deployment whose script runs a command that does not
// exist gets a diagnosis naming it within seconds (the analysis endpoint, the history's log entry), and the eight
// Admin: analysis endpoints over HTTP: requests and retry, settings with overrides, defaults and restore, status,
// and the test endpoint with the rules and with a local OpenAI-compatible provider (good answers, garbage, outages).
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalAgents, type LocalAgent } from '../../local/agents.js';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
let stack: Stack;
let admin: string;
let viewer: string;
let dir = '';
let agents: readonly LocalAgent[] = [];
let provider: Server;
let providerUrl = '';
/** What the fake provider answers next: a status and a body. */
let providerAnswer: () => { status: number; body: string; delayMs?: number } = () => ({ status: 500, body: 'down' });
const prompts: string[] = [];

const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, token: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { token, body });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  provider = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      prompts.push(text);
      const { status, body, delayMs = 0 } = providerAnswer();
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body);
      }, delayMs);
    });
  });
  await new Promise<void>((done) => provider.listen(0, '127.0.0.1', done));
  providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`;
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('analysis')}-`,
    bootstrapAdmin: ADMIN,
    // The fake provider listens on loopback over http: the SSRF guard lets only an allowed host through.
    env: { ANALYSIS_ALLOWED_HOSTS: `127.0.0.1:${(provider.address() as AddressInfo).port}` },
  });
  admin = (await api.login(ADMIN)).token;
  await createUser('viewer@example.com', 'viewer-password', ['user']);
  viewer = (await api.login({ email: 'viewer@example.com', password: 'viewer-password' })).token;
  dir = await mkdtemp(join(tmpdir(), 'deployer-analysis-'));
  agents = await startLocalAgents(stack, dir, () => undefined);
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
  await stack?.stop();
  await new Promise<void>((done) => provider?.close(() => done()));
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

describe('a failed command gets its analysis', () => {
  it('names the missing command within seconds, in the command results and the history', async () => {
    // Arrange
    const action = (
      await call('POST', '/actions', admin, {
        slug: 'broken-tool',
        name: 'Broken tool',
        version: { version: '1.0.0', script: 'echo preparing\ndeploytool-xyz --release 42' },
      })
    ).json;
    // Act
    const created = await call('POST', '/deployments', admin, {
      action_id: action.id,
      target_tags: [{ key: 'role', value: 'web' }],
    });
    const id = created.json.deployment_id as string;
    let results: { status: string; analysis?: Record<string, unknown> }[] = [];
    for (const until = Date.now() + 60_000; Date.now() < until; await sleep(250)) {
      results = (await call('GET', `/deployments/${id}/analysis`, viewer)).json;
      if (results.some((r) => r.analysis !== undefined)) break;
    }
    const history = (await call('GET', `/deployments/${id}/logs/history?limit=100`, viewer)).json as {
      analysis: Record<string, unknown> | null;
    }[];
    // Assess
    const failed = results.find((r) => r.status === 'failed');
    expect(failed?.analysis).toMatchObject({
      summary: expect.stringContaining('deploytool-xyz'),
      likely_cause: expect.stringContaining('deploytool-xyz'),
      remediation: expect.arrayContaining([expect.stringContaining('deploytool-xyz')]),
      model_version: expect.stringMatching(/^rules-/),
      analyzed_at: expect.stringMatching(/\+00:00$/),
    });
    expect((failed?.analysis?.['confidence'] as number) > 0.5).toBe(true);
    expect(history.some((entry) => entry.analysis !== null)).toBe(true);
  });
});

describe('Admin: analysis', () => {
  it('lists requests (completed, paged), and retries only what the state table allows', async () => {
    // Act
    const list = await call('GET', '/admin/analysis/requests?status=completed&limit=5', viewer);
    const request = list.json.data[0];
    const retryCompleted = await call('POST', `/admin/analysis/requests/${request.id}/retry`, admin);
    const retryUnknown = await call(
      'POST',
      '/admin/analysis/requests/00000000-0000-4000-8000-000000000000/retry',
      admin,
    );
    const notUuid = await call('POST', '/admin/analysis/requests/abc/retry', admin);
    const asViewer = await call('POST', `/admin/analysis/requests/${request.id}/retry`, viewer);
    const badStatus = await call('GET', '/admin/analysis/requests?status=done', viewer);
    // Assess
    expect(list.status).toBe(200);
    expect(list.json.meta).toMatchObject({ limit: 5, offset: 0 });
    expect(request).toMatchObject({ status: 'completed', source: 'rules', retry_count: 0 });
    expect(retryCompleted.status).toBe(400);
    expect(retryUnknown.status).toBe(404);
    expect(notUuid.status).toBe(400);
    expect(asViewer.status).toBe(403);
    expect(badStatus.status).toBe(400);
  });

  it('keeps settings as overrides over the defaults; restore clears them; bad values are 400 naming the field', async () => {
    // Act
    const defaults = (await call('GET', '/admin/analysis/settings/defaults', viewer)).json;
    const put = await call('PUT', '/admin/analysis/settings', admin, { max_retries: 5, analyze_cancelled: true });
    const bad = await call('PUT', '/admin/analysis/settings', admin, { max_retries: 'many' });
    const unknown = await call('PUT', '/admin/analysis/settings', admin, { colour: 'blue' });
    const incomplete = await call('PUT', '/admin/analysis/settings', admin, { provider: 'openai_compatible' });
    const restored = await call('POST', '/admin/analysis/settings/restore', admin);
    const asViewer = await call('PUT', '/admin/analysis/settings', viewer, { enabled: false });
    // Assess
    expect(defaults).toMatchObject({ enabled: true, max_retries: 3, provider: 'rules', provider_api_key: null });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ max_retries: 5, analyze_cancelled: true, enabled: true });
    expect(put.json.overridden).toEqual(['analyze_cancelled', 'max_retries']);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json.error.details)).toContain('max_retries');
    expect(unknown.status).toBe(400);
    expect(incomplete.status).toBe(400);
    expect(JSON.stringify(incomplete.json.error.details)).toContain('provider_url');
    expect(restored.json).toMatchObject({ max_retries: 3, analyze_cancelled: false, overridden: [] });
    expect(asViewer.status).toBe(403);
  });

  it('shows the status: requests by status, the queue depth, the rule set', async () => {
    // Act
    const status = await call('GET', '/admin/analysis/status', viewer);
    // Assess
    expect(status.status).toBe(200);
    expect(status.json.requests.completed).toBeGreaterThanOrEqual(1);
    expect(status.json).toMatchObject({ enabled: true, provider: 'rules', provider_reachable: null });
    expect(typeof status.json.queue_depth).toBe('number');
    expect(status.json.rule_set_version).toMatch(/^\d{4}\./);
  });

  it(
    'tests a sample with the rules, with a provider (its key shown as ***), and answers 503 without a fallback',
    { timeout: 60_000 },
    async () => {
      // Arrange
      const sample = { log: 'Reading package lists...\nE: Unable to locate package nosuchpackage', exit_code: 100 };
      // Act
      const empty = await call('POST', '/admin/analysis/test', admin, { log: '' });
      const byRules = await call('POST', '/admin/analysis/test', admin, sample);
      await call('PUT', '/admin/analysis/settings', admin, {
        provider: 'openai_compatible',
        provider_url: providerUrl,
        provider_model: 'diagnose-1',
        provider_api_key: 'sk-local-test',
        provider_timeout_seconds: 2,
      });
      const shown = (await call('GET', '/admin/analysis/settings', viewer)).json;
      providerAnswer = () => ({
        status: 200,
        body: JSON.stringify({
          choices: [
            {
              message: {
                content:
                  '{"confidence": 0.7, "summary": "apt has no such package", "likely_cause": "typo", "remediation": ["fix the name"]}',
              },
            },
          ],
        }),
      });
      const byProvider = await call('POST', '/admin/analysis/test', admin, sample);
      const reachable = (await call('GET', '/admin/analysis/status', viewer)).json;
      providerAnswer = () => ({ status: 200, body: '{"choices": [{"message": {"content": "no idea, sorry"}}]}' });
      const garbage = await call('POST', '/admin/analysis/test', admin, sample);
      await call('PUT', '/admin/analysis/settings', admin, { provider_timeout_seconds: 1 });
      providerAnswer = () => ({ status: 200, body: '{}', delayMs: 3_000 });
      const slow = await call('POST', '/admin/analysis/test', admin, sample);
      providerAnswer = () => ({ status: 429, body: '{}' });
      await call('PUT', '/admin/analysis/settings', admin, { fallback_to_rules: false });
      const unavailable = await call('POST', '/admin/analysis/test', admin, sample);
      await call('POST', '/admin/analysis/settings/restore', admin);
      // Assess
      expect(empty.status).toBe(400);
      expect(byRules.json).toMatchObject({
        source: 'rules',
        analysis: { summary: expect.stringContaining('nosuchpackage') },
      });
      expect(shown.provider_api_key).toBe('***');
      expect(byProvider.json).toMatchObject({ source: 'provider', analysis: { model_version: 'diagnose-1' } });
      expect(reachable).toMatchObject({ provider: 'openai_compatible', provider_reachable: true });
      expect(garbage.json.source).toBe('rules');
      expect(slow.json.source).toBe('rules');
      expect([unavailable.status, unavailable.json.error.code]).toEqual([503, 'EXTERNAL_SERVICE_ERROR']);
      expect(prompts.length).toBeGreaterThanOrEqual(3);
      expect(prompts[0]).toContain('nosuchpackage');
    },
  );
});
