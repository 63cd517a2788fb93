import { describe, expect, it } from 'vitest';
import {
  analysisRequestIdOf,
  ProviderError,
  type AnalysisProvider,
  type AnalysisRequest,
  type AnalysisRequestRepository,
  type AnalysisSettingsStore,
  type FailureAnalysis,
  type RulesAnalyzer,
} from '../../../../domain/analysis/model.js';
import {
  listAnalysisRequests,
  processAnalysis,
  PROCESSING_LEASE_MS,
  requestAnalysis,
  retryAnalysis,
  testAnalysis,
  type AnalysisDeps,
} from '../../../../domain/analysis/pipeline.js';
import { parseProviderAnswer } from '../../../../domain/analysis/provider.js';
import { effectiveSettings, updateSettings, type ProviderUrlPolicy } from '../../../../domain/analysis/settings.js';
import type { Caller } from '../../../../domain/identity/types.js';
import type { Command, StoredChunk } from '../../../../domain/targets/types.js';
import { AesGcmSecretCipher } from '../../../../infra/crypto/secret-cipher.js';
import { FakeClock } from '../../../fakes/clock.js';
import { aDeployment, aPlan, FakeDeploymentRepository } from '../../../fakes/deployments.js';

class FakeRequests implements AnalysisRequestRepository {
  readonly items = new Map<string, AnalysisRequest>();
  async create(r: AnalysisRequest) {
    if (this.items.has(r.id)) return false;
    this.items.set(r.id, r);
    return true;
  }
  async get(id: string) {
    return this.items.get(id);
  }
  async listAll() {
    return [...this.items.values()].reverse();
  }
  async update(previous: AnalysisRequest, next: AnalysisRequest) {
    if (this.items.get(previous.id)?.updatedAt !== previous.updatedAt) return false;
    this.items.set(next.id, next);
    return true;
  }
}

class FakeSettings implements AnalysisSettingsStore {
  stored: Record<string, unknown> = {};
  async overrides() {
    return this.stored;
  }
  async save(o: Readonly<Record<string, unknown>>) {
    this.stored = { ...o };
  }
}

const cipher = new AesGcmSecretCipher({ activeKeyId: 'test', keys: { test: Buffer.alloc(32, 3) } });
const admin: Caller = { kind: 'user', userId: 'u1', tenantId: null, roles: ['admin'], permissions: new Set() };
const operator: Caller = { kind: 'user', userId: 'u2', tenantId: null, roles: ['operator'], permissions: new Set() };

/** Every provider URL allowed (the SSRF policy is tested in tests/unit/domain/analysis/settings.test.ts). */
const anyUrl: ProviderUrlPolicy = { problem: async () => undefined };
const settingsDeps = (settings: AnalysisSettingsStore) => ({ settings, cipher, providerUrls: anyUrl });

const rulesSeen: string[] = [];
const rules: RulesAnalyzer = (input, now) => {
  rulesSeen.push(input.stderrTail);
  return {
    confidence: 0.9,
    summary: `rules saw exit ${input.exitCode}`,
    likely_cause: 'cause',
    remediation: ['do this'],
    analyzed_at: now.toISOString().replace('Z', '+00:00'),
    model_version: 'rules-test',
    rule_id: 'test',
  };
};

const setup = (options: { provider?: AnalysisProvider } = {}) => {
  const clock = new FakeClock(new Date('2026-11-24T10:00:00.000Z'));
  const requests = new FakeRequests();
  const sent: string[] = [];
  const settings = new FakeSettings();
  const deployments = new FakeDeploymentRepository();
  const deployment = deployments.put(
    aDeployment({
      id: 'd1',
      analysisEnabled: true,
      plan: aPlan({
        resolvedVariables: {
          TOKEN: { value: `enc:${cipher.encrypt('s3cret-value', 'deployment-variable')}`, secret: true },
        },
      }),
    }),
  );
  const commands = new Map<string, Command>();
  const chunks = new Map<string, StoredChunk[]>();
  const recorded = new Map<string, FailureAnalysis>();
  const published: string[] = [];
  const deps: AnalysisDeps = {
    requests,
    queue: { send: async (id) => void sent.push(id), depth: async () => sent.length },
    settings,
    cipher,
    commands: {
      get: async (id) => commands.get(id),
      output: async (id) => chunks.get(id) ?? [],
      recordAnalysis: async (id, analysis) => void recorded.set(id, analysis),
    },
    deployments,
    rules,
    ...(options.provider === undefined ? {} : { provider: options.provider }),
    publish: async (_d, command) => void published.push(command.id),
    clock,
  };
  const failed = (id: string, exitCode: number, stderr = 'boom'): Command => {
    const command: Command = {
      id,
      targetId: 't1',
      deploymentId: deployment.id,
      stepId: 's1',
      attempt: 1,
      action: { id: 'a1', slug: 'deploy', version: '1.0.0' },
      script: 'false',
      interpreter: 'sh',
      variables: {},
      secretVariables: [],
      timeoutSeconds: null,
      status: 'completed',
      createdAt: '2026-11-24T09:59:00.000Z',
      deliveredAt: '2026-11-24T09:59:01.000Z',
      cancelRequestedAt: null,
      outputSeq: 0,
      result: {
        exitCode,
        startedAt: '2026-11-24T09:59:01.000Z',
        completedAt: '2026-11-24T09:59:02.000Z',
        errorMessage: null,
      },
    };
    commands.set(id, command);
    chunks.set(id, [{ stream: 'stderr', data: stderr, seq: 0, receivedAt: '2026-11-24T09:59:02.000Z' }]);
    return command;
  };
  return { deps, clock, requests, sent, settings, deployments, deployment, failed, recorded, published };
};

describe('requestAnalysis', () => {
  it('stores one request per failed command and queues it; a repeat finds the same request', async () => {
    // Arrange
    const { deps, failed, sent, requests } = setup();
    const command = failed('c1', 1);
    // Act
    const first = await requestAnalysis(deps, command);
    const again = await requestAnalysis(deps, command);
    // Assess
    expect(first?.id).toBe(analysisRequestIdOf('c1'));
    expect(first?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(again?.id).toBe(first?.id);
    expect(requests.items.size).toBe(1);
    expect(sent).toEqual([first!.id, first!.id]);
  });

  it('skips successes, cancels (by default), deployments without analysis and a disabled pipeline', async () => {
    // Arrange
    const { deps, failed, deployments, deployment, settings } = setup();
    // Act / Assess
    expect(await requestAnalysis(deps, failed('ok', 0))).toBeUndefined();
    expect(await requestAnalysis(deps, failed('cancel', 130))).toBeUndefined();
    expect(await requestAnalysis(deps, failed('timeout', 124))).toBeDefined();
    deployments.put({ ...deployment, analysisEnabled: false });
    expect(await requestAnalysis(deps, failed('off', 1))).toBeUndefined();
    deployments.put({ ...deployment, analysisEnabled: true });
    await settings.save({ enabled: false });
    expect(await requestAnalysis(deps, failed('disabled', 1))).toBeUndefined();
  });
});

describe('processAnalysis', () => {
  it('pending -> processing -> completed: stores the analysis on the command, tells the stream, once', async () => {
    // Arrange
    const { deps, failed, requests, recorded, published } = setup();
    const request = (await requestAnalysis(deps, failed('c1', 127, 'sh: deploy-tool: not found')))!;
    // Act
    const outcome = await processAnalysis(deps, request.id);
    const repeat = await processAnalysis(deps, request.id);
    // Assess
    expect(outcome).toBe('completed');
    expect(repeat).toBe('skipped');
    expect(requests.items.get(request.id)).toMatchObject({ status: 'completed', source: 'rules', retryCount: 0 });
    expect(recorded.get('c1')).toMatchObject({ summary: 'rules saw exit 127', model_version: 'rules-test' });
    expect(published).toEqual(['c1']);
  });

  it('leaves a request another consumer holds, and takes it again after the lease', async () => {
    // Arrange
    const { deps, failed, requests, clock } = setup();
    const request = (await requestAnalysis(deps, failed('c1', 1)))!;
    const held = { ...request, status: 'processing' as const, processingSince: clock.now().toISOString() };
    requests.items.set(request.id, { ...held, updatedAt: '2026-11-24T10:00:00.001Z' });
    // Act
    const whileHeld = await processAnalysis(deps, request.id);
    clock.advance(PROCESSING_LEASE_MS);
    const afterLease = await processAnalysis(deps, request.id);
    // Assess
    expect(whileHeld).toBe('retry');
    expect(afterLease).toBe('completed');
  });

  it('counts failures, retries up to max_retries, then fails the request with the error', async () => {
    // Arrange
    const { deps, failed, requests, settings } = setup();
    await settings.save({ max_retries: 1 });
    const request = (await requestAnalysis(deps, failed('c1', 1)))!;
    const throwing: AnalysisDeps = {
      ...deps,
      rules: () => {
        throw new Error('rules down');
      },
    };
    // Act
    const first = await processAnalysis(throwing, request.id);
    const second = await processAnalysis(throwing, request.id);
    // Assess
    expect(first).toBe('retry');
    expect(second).toBe('failed');
    expect(requests.items.get(request.id)).toMatchObject({ status: 'failed', retryCount: 2, lastError: 'rules down' });
  });

  it('asks a configured provider with secrets masked, and falls back to the rules when it fails', async () => {
    // Arrange
    const prompts: string[] = [];
    let answer: () => Promise<string> = async () =>
      '```json\n{"confidence": 0.8, "summary": "The token s3cret-value was refused", "likely_cause": "bad token", "remediation": ["rotate it"]}\n```';
    const provider: AnalysisProvider = {
      complete: async (request) => {
        prompts.push(request.prompt);
        return answer();
      },
    };
    const { deps, failed, recorded, settings } = setup({ provider });
    await updateSettings(settingsDeps(settings), admin, {
      provider: 'openai_compatible',
      provider_url: 'http://127.0.0.1:9/v1',
      provider_model: 'diagnose-1',
      provider_api_key: 'sk-test',
    });
    // Act
    const a = (await requestAnalysis(deps, failed('c1', 1, 'auth with s3cret-value failed')))!;
    await processAnalysis(deps, a.id);
    answer = async () => {
      throw new ProviderError('answered HTTP 429');
    };
    const b = (await requestAnalysis(deps, failed('c2', 1)))!;
    await processAnalysis(deps, b.id);
    // Assess
    expect(prompts[0]).toContain('auth with *** failed');
    expect(prompts.join('\n')).not.toContain('s3cret-value');
    expect(recorded.get('c1')).toMatchObject({ summary: 'The token *** was refused', model_version: 'diagnose-1' });
    expect(recorded.get('c2')).toMatchObject({ model_version: 'rules-test' });
    expect((await settings.overrides())['provider_api_key']).not.toBe('sk-test');
    expect((await effectiveSettings(settings, cipher)).settings.provider_api_key).toBe('sk-test');
  });
});

describe('retryAnalysis', () => {
  it('follows the state table: failed by an admin, pending with retries used up; anything else 400', async () => {
    // Arrange
    const { deps, failed, requests, sent } = setup();
    const request = (await requestAnalysis(deps, failed('c1', 1)))!;
    requests.items.set(request.id, { ...request, status: 'failed', retryCount: 4 });
    // Act / Assess
    await expect(retryAnalysis(deps, operator, request.id)).rejects.toThrow(/Only an admin/);
    const retried = await retryAnalysis(deps, admin, request.id);
    expect(retried).toMatchObject({ status: 'pending', retry_count: 0, message: 'Retry scheduled.' });
    expect(sent.at(-1)).toBe(request.id);
    await expect(retryAnalysis(deps, admin, request.id)).rejects.toThrow(/pending cannot be retried/);
    const current = requests.items.get(request.id)!;
    requests.items.set(request.id, { ...current, retryCount: current.maxRetries });
    expect(await retryAnalysis(deps, operator, request.id)).toMatchObject({ status: 'pending' });
    await expect(retryAnalysis(deps, admin, '00000000-0000-4000-8000-000000000000')).rejects.toThrow(/not found/i);
  });
});

describe('listAnalysisRequests and testAnalysis', () => {
  it('pages by limit and offset, filters by status, and keeps tenants apart', async () => {
    // Arrange
    const { deps, failed } = setup();
    for (const id of ['c1', 'c2', 'c3']) await requestAnalysis(deps, failed(id, 1));
    const tenantCaller: Caller = { ...admin, tenantId: 'other-tenant' };
    // Act
    const page = await listAnalysisRequests(deps, admin, { limit: 2, offset: 1 });
    const none = await listAnalysisRequests(deps, admin, { status: 'completed', limit: 50, offset: 0 });
    const foreign = await listAnalysisRequests(deps, tenantCaller, { limit: 50, offset: 0 });
    // Assess
    expect(page.meta).toEqual({ total: 3, limit: 2, offset: 1, has_more: false });
    expect(page.data).toHaveLength(2);
    expect(none.data).toEqual([]);
    expect(foreign.meta.total).toBe(0);
  });

  it('refuses an empty sample, and answers 503 when the provider fails without a fallback', async () => {
    // Arrange
    const provider: AnalysisProvider = {
      complete: async () => {
        throw new ProviderError('no answer within 1000 ms');
      },
    };
    const { deps, settings } = setup({ provider });
    // Act / Assess
    await expect(testAnalysis(deps, { log: '  ' })).rejects.toThrow(/must not be empty/);
    expect((await testAnalysis(deps, { log: 'E: Unable to locate package nosuch' })).source).toBe('rules');
    await updateSettings(settingsDeps(settings), admin, {
      provider: 'openai_compatible',
      provider_url: 'http://127.0.0.1:9/v1',
      provider_model: 'm',
      fallback_to_rules: false,
    });
    await expect(testAnalysis(deps, { log: 'boom' })).rejects.toMatchObject({
      code: 'EXTERNAL_SERVICE_ERROR',
      kind: 'unavailable',
    });
    await expect(updateSettings(settingsDeps(settings), admin, { provider_url: null })).rejects.toThrow(
      /provider_url is required/,
    );
  });
});

describe('parseProviderAnswer', () => {
  it('takes a JSON object (fenced or not), clamps confidence, and refuses garbage', () => {
    // Arrange
    const now = new Date('2026-11-24T10:00:00.000Z');
    // Act / Assess
    expect(
      parseProviderAnswer('{"confidence": 7, "summary": "s", "likely_cause": "c", "remediation": ["r"]}', 'm', now),
    ).toMatchObject({ confidence: 1, analyzed_at: '2026-11-24T10:00:00.000+00:00', model_version: 'm' });
    expect(() => parseProviderAnswer('I think the disk is full.', 'm', now)).toThrow(ProviderError);
    expect(() => parseProviderAnswer('{"confidence": "high"}', 'm', now)).toThrow(/confidence/);
    expect(() =>
      parseProviderAnswer('{"confidence": 0.5, "summary": "s", "likely_cause": "c", "remediation": []}', 'm', now),
    ).toThrow(/remediation/);
  });
});
