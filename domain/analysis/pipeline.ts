// The failure-analysis pipeline (decisions.md, "Failure analysis"):
//
// requestAnalysis  (a command completed with a failing exit code) -> request stored (id from the command's) -> queued
// processAnalysis  (the analysis queue's consumer) -> pending -> processing -> completed | pending (retry) | failed
//                  -> the analysis stored on the command and sent to the deployment's log stream
// retryAnalysis, listAnalysisRequests, analysisStatus, testAnalysis: the admin endpoints
//
// Every transition is a conditional write on the request's updatedAt, so a redelivered or concurrent message changes
// nothing twice; a consumer that died mid-way leaves `processing`, taken again once PROCESSING_LEASE_MS passed.
import { ExternalServiceError, NotFoundError, ValidationError } from '../errors.js';
import { mayRetryFailedAnalysis } from '../identity/delegation.js';
import type { Caller } from '../identity/types.js';
import type { SecretCipher } from '../identity/ports.js';
import type { WebhookEmitter } from '../webhooks/notify.js';
import type { Clock } from '../shared/ports.js';
import type { Command, StoredChunk } from '../targets/types.js';
import type { Deployment } from '../deployments/types.js';
import { openVariable } from '../shared/variable-secrets.js';
import {
  ANALYSIS_STATUSES,
  analysisRequestIdOf,
  type AnalysisInput,
  type AnalysisProvider,
  type AnalysisQueue,
  type AnalysisRequest,
  type AnalysisRequestRepository,
  type AnalysisSettingsStore,
  type AnalysisStatus,
  type FailureAnalysis,
  type RulesAnalyzer,
} from './model.js';
import { analyzeWithProvider } from './provider.js';
import { effectiveSettings, type AnalysisSettings } from './settings.js';

/** A consumer holds a request this long; after it, another may take it (the consumer's timeout is 60 s). */
export const PROCESSING_LEASE_MS = 120_000;
export const TAIL_CHARS = 2000;

export interface AnalysisDeps {
  readonly requests: AnalysisRequestRepository;
  readonly queue: AnalysisQueue;
  readonly settings: AnalysisSettingsStore;
  readonly cipher: SecretCipher;
  readonly commands: {
    get(id: string): Promise<Command | undefined>;
    output(commandId: string): Promise<readonly StoredChunk[]>;
    /** Stores the analysis on the command record (the command results show it). */
    recordAnalysis(commandId: string, analysis: FailureAnalysis): Promise<void>;
  };
  readonly deployments: { get(id: string): Promise<Deployment | undefined> };
  readonly rules: RulesAnalyzer;
  readonly provider?: AnalysisProvider;
  /** Tells the deployment's live stream (a log entry carrying the analysis). */
  readonly publish?: (deployment: Deployment, command: Command, analysis: FailureAnalysis) => Promise<void>;
  readonly clock: Clock;
  /** Outgoing webhooks (analysis.completed); absent: none. */
  readonly webhooks?: WebhookEmitter;
}

/** analysis.completed for a completed request (again: an emission repeated by a redelivery makes no second delivery). */
const emitCompleted = async (deps: Pick<AnalysisDeps, 'webhooks'>, request: AnalysisRequest): Promise<void> => {
  await deps.webhooks?.emit({
    type: 'analysis.completed',
    subject: [request.id],
    tenantId: request.tenantId,
    timestamp: request.completedAt ?? request.updatedAt,
    since: request.createdAt,
    data: () => requestView(request),
  });
};

/** Whether a failure with this exit code is analysed under these settings. */
export const analysed = (settings: AnalysisSettings, exitCode: number): boolean => {
  if (!settings.enabled || exitCode === 0) return false;
  if (exitCode === 124) return settings.analyze_timeouts;
  if (exitCode === 130) return settings.analyze_cancelled;
  if (exitCode === -1) return settings.analyze_lost;
  return true;
};

/** A command completed: a failing one (that the settings and its deployment want analysed) gets a request. */
export const requestAnalysis = async (deps: AnalysisDeps, command: Command): Promise<AnalysisRequest | undefined> => {
  const exitCode = command.result?.exitCode;
  if (exitCode === undefined || exitCode === 0) return undefined;
  const deployment = await deps.deployments.get(command.deploymentId);
  if (deployment === undefined || !deployment.analysisEnabled) return undefined;
  const { settings } = await effectiveSettings(deps.settings, deps.cipher);
  if (!analysed(settings, exitCode)) return undefined;
  const now = deps.clock.now().toISOString();
  const request: AnalysisRequest = {
    id: analysisRequestIdOf(command.id),
    commandId: command.id,
    deploymentId: command.deploymentId,
    stepId: command.stepId,
    targetId: command.targetId,
    tenantId: deployment.tenantId,
    exitCode,
    status: 'pending',
    retryCount: 0,
    maxRetries: settings.max_retries,
    createdAt: now,
    updatedAt: now,
    processingSince: null,
    completedAt: null,
    lastError: null,
    source: null,
    analysis: null,
  };
  const created = await deps.requests.create(request);
  const stored = created ? request : await deps.requests.get(request.id);
  // Sent again for a request still pending (the first send may have been the one that failed).
  if (stored?.status === 'pending') await deps.queue.send(request.id);
  return stored;
};

const tail = (chunks: readonly StoredChunk[], stream: 'stdout' | 'stderr'): string =>
  chunks
    .filter((c) => c.stream === stream)
    .map((c) => c.data)
    .join('')
    .slice(-TAIL_CHARS);

/** The secret values of the deployment's variables, opened: masked in everything an analysis quotes or sends. */
const secretValues = (cipher: SecretCipher, deployment: Deployment | undefined): string[] =>
  Object.values(deployment?.plan.resolvedVariables ?? {})
    .filter((v) => v.secret)
    .flatMap((v) => {
      try {
        return [openVariable(cipher, v.value, true)];
      } catch {
        return [];
      }
    })
    .filter((value) => value !== '');

/** The analysis of one input under the settings: the provider when configured (rules as its fallback), else rules. */
export const diagnose = async (
  deps: Pick<AnalysisDeps, 'rules' | 'provider'>,
  settings: AnalysisSettings,
  input: AnalysisInput,
  now: Date,
): Promise<{ analysis: FailureAnalysis; source: 'rules' | 'provider' }> => {
  if (settings.provider === 'openai_compatible' && deps.provider !== undefined) {
    try {
      return { analysis: await analyzeWithProvider(deps.provider, settings, input, now), source: 'provider' };
    } catch (error) {
      if (!settings.fallback_to_rules) throw error;
    }
  }
  const { rule_id: _rule, ...analysis } = deps.rules(input, now);
  return { analysis, source: 'rules' };
};

export type ProcessOutcome = 'completed' | 'retry' | 'failed' | 'skipped';

/** One message of the analysis queue. 'retry': leave the message to come back (SQS redelivers it). */
export const processAnalysis = async (deps: AnalysisDeps, requestId: string): Promise<ProcessOutcome> => {
  const request = await deps.requests.get(requestId);
  if (request?.status === 'completed') await emitCompleted(deps, request);
  if (request === undefined || request.status === 'completed' || request.status === 'failed') return 'skipped';
  const now = deps.clock.now();
  if (
    request.status === 'processing' &&
    request.processingSince !== null &&
    now.getTime() - Date.parse(request.processingSince) < PROCESSING_LEASE_MS
  )
    return 'retry'; // another consumer holds it; this message comes back after its visibility timeout
  const claimed: AnalysisRequest = {
    ...request,
    status: 'processing',
    processingSince: now.toISOString(),
    updatedAt: now.toISOString(),
  };
  if (!(await deps.requests.update(request, claimed))) return 'retry';
  let completedRequest: AnalysisRequest;
  try {
    const [command, deployment, { settings }] = await Promise.all([
      deps.commands.get(request.commandId),
      deps.deployments.get(request.deploymentId),
      effectiveSettings(deps.settings, deps.cipher),
    ]);
    if (command === undefined || command.result === null) throw new Error('The command or its result is gone.');
    const chunks = await deps.commands.output(command.id);
    const step = deployment?.plan.steps.find((s) => s.id === command.stepId);
    const input: AnalysisInput = {
      exitCode: command.result.exitCode,
      stdoutTail: tail(chunks, 'stdout'),
      stderrTail: tail(chunks, 'stderr'),
      errorMessage: command.result.errorMessage,
      interpreter: command.interpreter,
      actionName: step?.actionName ?? command.action.slug,
      secretValues: secretValues(deps.cipher, deployment),
    };
    const { analysis, source } = await diagnose(deps, settings, input, deps.clock.now());
    await deps.commands.recordAnalysis(command.id, analysis);
    const done = deps.clock.now().toISOString();
    const completed: AnalysisRequest = {
      ...claimed,
      status: 'completed',
      processingSince: null,
      completedAt: done,
      updatedAt: done,
      lastError: null,
      source,
      analysis,
    };
    await deps.requests.update(claimed, completed);
    if (deployment !== undefined) await deps.publish?.(deployment, command, analysis);
    // Outside the failure handling below: a failed emission retries the message, which finds it completed and emits.
    completedRequest = completed;
  } catch (error) {
    const at = deps.clock.now().toISOString();
    const retryCount = claimed.retryCount + 1;
    const failed = retryCount > claimed.maxRetries;
    await deps.requests.update(claimed, {
      ...claimed,
      status: failed ? 'failed' : 'pending',
      retryCount,
      processingSince: null,
      updatedAt: at,
      lastError: error instanceof Error ? error.message.slice(0, 500) : String(error).slice(0, 500),
    });
    return failed ? 'failed' : 'retry';
  }
  await emitCompleted(deps, completedRequest);
  return 'completed';
};

/** The log entry that brings a command's analysis to its deployment's stream and history (appended once per command). */
export const analysisLogEvent = (deployment: Deployment, command: Command, analysis: FailureAnalysis, at: string) => {
  const step = deployment.plan.steps.find((s) => s.id === command.stepId);
  return {
    key: `analysis#${command.id}`,
    events: [
      {
        at,
        event: {
          type: 'log' as const,
          log: {
            timestamp: at,
            level: 'error',
            step_id: command.stepId,
            target_id: command.targetId,
            target_name: step?.targetName ?? null,
            message: `Failure analysis: ${analysis.summary}`,
            metadata: { command_id: command.id, kind: 'analysis' },
            analysis: { ...analysis },
          },
        },
      },
    ],
  };
};

export const requestView = (r: AnalysisRequest) => ({
  id: r.id,
  command_id: r.commandId,
  deployment_id: r.deploymentId,
  step_id: r.stepId,
  target_id: r.targetId,
  tenant_id: r.tenantId,
  exit_code: r.exitCode,
  status: r.status,
  retry_count: r.retryCount,
  max_retries: r.maxRetries,
  source: r.source,
  last_error: r.lastError,
  analysis: r.analysis,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
  completed_at: r.completedAt,
});

const visible = (caller: Caller, r: AnalysisRequest) => caller.tenantId === null || r.tenantId === caller.tenantId;

export const listAnalysisRequests = async (
  deps: Pick<AnalysisDeps, 'requests'>,
  caller: Caller,
  query: { status?: AnalysisStatus | undefined; tenant_id?: string | undefined; limit: number; offset: number },
) => {
  const all = (await deps.requests.listAll())
    .filter((r) => visible(caller, r))
    .filter((r) => caller.tenantId !== null || query.tenant_id === undefined || r.tenantId === query.tenant_id)
    .filter((r) => query.status === undefined || r.status === query.status);
  return {
    data: all.slice(query.offset, query.offset + query.limit).map(requestView),
    meta: {
      total: all.length,
      limit: query.limit,
      offset: query.offset,
      has_more: query.offset + query.limit < all.length,
    },
  };
};

/**
 * The spec's state table: a failed request, retried by an admin (mayRetryFailedAnalysis: an admin session, or an
 * admin's credential scoped to analysis:manage); a pending one whose retries are used up. Either goes back to pending
 * with its count reset and a new message; anything else is 400.
 */
export const retryAnalysis = async (deps: AnalysisDeps, caller: Caller, id: string) => {
  const request = await deps.requests.get(id);
  if (request === undefined || !visible(caller, request)) throw new NotFoundError('Analysis request', id);
  const admin = mayRetryFailedAnalysis(caller);
  const allowed =
    (request.status === 'failed' && admin) ||
    (request.status === 'pending' && request.retryCount >= request.maxRetries);
  if (!allowed) {
    throw new ValidationError(
      request.status === 'failed'
        ? 'Only an admin can retry a failed analysis request (an API key or OAuth token of an admin needs the analysis:manage scope).'
        : `An analysis request that is ${request.status} cannot be retried.`,
      [{ field: 'status', code: 'VALIDATION_ERROR', message: `The request is ${request.status}.` }],
    );
  }
  const now = deps.clock.now().toISOString();
  const next: AnalysisRequest = { ...request, status: 'pending', retryCount: 0, updatedAt: now, lastError: null };
  if (!(await deps.requests.update(request, next)))
    throw new ValidationError('The request changed meanwhile; look at it again.');
  await deps.queue.send(request.id);
  return { ...requestView(next), message: 'Retry scheduled.' };
};

export const analysisStatus = async (
  deps: Pick<AnalysisDeps, 'requests' | 'queue' | 'settings' | 'cipher' | 'provider'>,
  caller: Caller,
  ruleSetVersion: string,
) => {
  const { settings } = await effectiveSettings(deps.settings, deps.cipher);
  const requests = (await deps.requests.listAll()).filter((r) => visible(caller, r));
  const counts = Object.fromEntries(ANALYSIS_STATUSES.map((s) => [s, requests.filter((r) => r.status === s).length]));
  const lastFailure = requests
    .filter((r) => r.lastError !== null)
    .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))[0];
  let reachable: boolean | null = null;
  if (settings.provider === 'openai_compatible' && deps.provider !== undefined && settings.provider_url !== null) {
    reachable = await deps.provider
      .complete({
        url: settings.provider_url,
        model: settings.provider_model ?? '',
        apiKey: settings.provider_api_key,
        system: 'Answer with the single word: ok',
        prompt: 'ping',
        maxTokens: 1,
        timeoutMs: Math.min(5_000, settings.provider_timeout_seconds * 1000),
      })
      .then(
        () => true,
        () => false,
      );
  }
  return {
    enabled: settings.enabled,
    provider: settings.provider,
    provider_reachable: reachable,
    rule_set_version: ruleSetVersion,
    queue_depth: await deps.queue.depth(),
    requests: counts,
    last_failure:
      lastFailure === undefined
        ? null
        : { id: lastFailure.id, status: lastFailure.status, error: lastFailure.lastError, at: lastFailure.updatedAt },
  };
};

export interface TestSample {
  readonly log?: string | undefined;
  readonly stdout?: string | undefined;
  readonly stderr?: string | undefined;
  readonly exit_code?: number | undefined;
  readonly interpreter?: AnalysisInput['interpreter'] | undefined;
  readonly action_name?: string | undefined;
}

/** POST /admin/analysis/test: the analyzer on a sample; 503 when the provider fails and no fallback is allowed. */
export const testAnalysis = async (
  deps: Pick<AnalysisDeps, 'rules' | 'provider' | 'settings' | 'cipher' | 'clock'>,
  sample: TestSample,
) => {
  const stderr = [sample.stderr ?? '', sample.log ?? ''].filter((s) => s !== '').join('\n');
  if (stderr.trim() === '' && (sample.stdout ?? '').trim() === '')
    throw ValidationError.field('log', 'Give a sample: log, stderr or stdout must not be empty.');
  const { settings } = await effectiveSettings(deps.settings, deps.cipher);
  const input: AnalysisInput = {
    exitCode: sample.exit_code ?? 1,
    stdoutTail: (sample.stdout ?? '').slice(-TAIL_CHARS),
    stderrTail: stderr.slice(-TAIL_CHARS),
    errorMessage: null,
    interpreter: sample.interpreter ?? null,
    actionName: sample.action_name ?? null,
  };
  try {
    const { analysis, source } = await diagnose(deps, settings, input, deps.clock.now());
    return { analysis, source };
  } catch (error) {
    // The spec's endpoint table lists 503 for this; the code says a service we called failed (docs/errors.md).
    throw new ExternalServiceError(
      `The analysis provider did not answer (${(error as Error).message}) and fallback_to_rules is off.`,
      { status: 503 },
    );
  }
};
