// Failure analysis: the records and ports of the pipeline (decisions.md, "Failure analysis"). Every command that
// fails gets an analysis request; a consumer of the analysis queue turns it into a diagnosis (the rule library,
// or a configured model provider with the rules as fallback) stored on the request and on the command.
import { createHash } from 'node:crypto';
import type { Interpreter } from '../targets/types.js';

export type AnalysisStatus = 'pending' | 'processing' | 'completed' | 'failed';
export const ANALYSIS_STATUSES: readonly AnalysisStatus[] = ['pending', 'processing', 'completed', 'failed'];

/** The spec's `analysis` object of a failed command result (analyzed_at in the `+00:00` form). */
export interface FailureAnalysis {
  readonly confidence: number;
  readonly summary: string;
  readonly likely_cause: string;
  readonly remediation: readonly string[];
  readonly analyzed_at: string;
  readonly model_version: string;
}

/** What an analyzer reads of a failed command. */
export interface AnalysisInput {
  readonly exitCode: number | null;
  readonly stdoutTail: string;
  readonly stderrTail: string;
  readonly errorMessage: string | null;
  readonly interpreter: Interpreter | null;
  readonly actionName: string | null;
  /** Values masked as *** in everything the analysis quotes or sends out. */
  readonly secretValues?: readonly string[];
}

/** The rule library (domain/analysis/analyze.ts): never fails, never leaves the service. */
export type RulesAnalyzer = (input: AnalysisInput, now: Date) => FailureAnalysis & { readonly rule_id?: string };

export interface AnalysisRequest {
  readonly id: string;
  readonly commandId: string;
  readonly deploymentId: string;
  readonly stepId: string;
  readonly targetId: string;
  readonly tenantId: string | null;
  readonly exitCode: number | null;
  readonly status: AnalysisStatus;
  readonly retryCount: number;
  readonly maxRetries: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** While processing: since when (a consumer that died leaves it; it is taken again after the lease). */
  readonly processingSince: string | null;
  readonly completedAt: string | null;
  readonly lastError: string | null;
  /** `rules` or `provider`: who answered. */
  readonly source: 'rules' | 'provider' | null;
  readonly analysis: FailureAnalysis | null;
}

/** One request per failed command: its id is derived from the command's, so a repeated trigger finds it. */
export const analysisRequestIdOf = (commandId: string): string => {
  const hex = createHash('sha256').update(`analysis:${commandId}`).digest('hex');
  // A UUID (version 8, the custom layout of RFC 9562), as the spec's retry path asks for.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex.slice(16, 18), 16) & 0x3f) | 0x80).toString(16)}${hex.slice(18, 20)}-${hex.slice(20, 32)}`;
};

export interface AnalysisRequestRepository {
  /** Stores a new request; false when one with its id exists already. */
  create(request: AnalysisRequest): Promise<boolean>;
  get(id: string): Promise<AnalysisRequest | undefined>;
  /** Every request, newest first (the admin list filters and pages in memory). */
  listAll(): Promise<readonly AnalysisRequest[]>;
  /** Replaces the request when it is still as `previous` (its updatedAt); false when it changed meanwhile. */
  update(previous: AnalysisRequest, next: AnalysisRequest): Promise<boolean>;
}

export interface AnalysisQueue {
  /** Asks the consumer to process the request (at least once). */
  send(requestId: string): Promise<void>;
  /** Messages waiting (approximate), for the status endpoint. */
  depth(): Promise<number>;
}

/** The stored overrides of the settings (only what an admin set). */
export interface AnalysisSettingsStore {
  overrides(): Promise<Readonly<Record<string, unknown>>>;
  /** Replaces the overrides (an empty object restores the defaults). */
  save(overrides: Readonly<Record<string, unknown>>): Promise<void>;
}

/** An OpenAI-compatible chat-completions endpoint. */
export interface AnalysisProvider {
  /** The model's answer text; throws ProviderError on any failure (network, status, timeout). */
  complete(request: {
    readonly url: string;
    readonly model: string;
    readonly apiKey: string | null;
    readonly system: string;
    readonly prompt: string;
    readonly maxTokens: number;
    readonly timeoutMs: number;
  }): Promise<string>;
}

export class ProviderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderError';
  }
}
