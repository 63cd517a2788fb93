// Request and answer shapes of the Admin: analysis endpoints (api.md), shared by their handlers.
import * as v from 'valibot';
import { ANALYSIS_STATUSES } from '../../../domain/analysis/model.js';

export const AnalysisObjectSchema = v.object({
  confidence: v.number(),
  summary: v.string(),
  likely_cause: v.string(),
  remediation: v.array(v.string()),
  analyzed_at: v.string(),
  model_version: v.string(),
});

export const AnalysisRequestSchema = v.object({
  id: v.string(),
  command_id: v.string(),
  deployment_id: v.string(),
  step_id: v.string(),
  target_id: v.string(),
  tenant_id: v.nullable(v.string()),
  exit_code: v.nullable(v.number()),
  status: v.picklist(ANALYSIS_STATUSES),
  retry_count: v.number(),
  max_retries: v.number(),
  source: v.nullable(v.picklist(['rules', 'provider'])),
  last_error: v.nullable(v.string()),
  analysis: v.nullable(AnalysisObjectSchema),
  created_at: v.string(),
  updated_at: v.string(),
  completed_at: v.nullable(v.string()),
});

const Provider = v.picklist(['rules', 'openai_compatible']);
const Seconds = v.pipe(v.number('must be a number'), v.integer('must be an integer'), v.minValue(1), v.maxValue(120));

/** Every setting, as in effect (defaults merged with the overrides); the API key shown as `***` when set. */
export const AnalysisSettingsSchema = v.object({
  enabled: v.boolean(),
  analyze_timeouts: v.boolean(),
  analyze_cancelled: v.boolean(),
  analyze_lost: v.boolean(),
  max_retries: v.number(),
  provider: Provider,
  provider_url: v.nullable(v.string()),
  provider_model: v.nullable(v.string()),
  provider_api_key: v.nullable(v.string()),
  provider_timeout_seconds: v.number(),
  provider_max_tokens: v.number(),
  fallback_to_rules: v.boolean(),
  rule_set_version: v.string(),
  overridden: v.array(v.string()),
});

/** Only what changes; `null` removes an override (the default applies again). */
export const UpdateAnalysisSettingsBody = v.strictObject({
  enabled: v.optional(v.nullable(v.boolean())),
  analyze_timeouts: v.optional(v.nullable(v.boolean())),
  analyze_cancelled: v.optional(v.nullable(v.boolean())),
  analyze_lost: v.optional(v.nullable(v.boolean())),
  max_retries: v.optional(
    v.nullable(v.pipe(v.number('must be a number'), v.integer('must be an integer'), v.minValue(0), v.maxValue(10))),
  ),
  provider: v.optional(v.nullable(Provider)),
  provider_url: v.optional(
    v.nullable(
      v.pipe(v.string(), v.url('must be a URL'), v.regex(/^https?:\/\//, 'must be an http(s) URL'), v.maxLength(2000)),
    ),
  ),
  provider_model: v.optional(v.nullable(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200)))),
  provider_api_key: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(4000)))),
  provider_timeout_seconds: v.optional(v.nullable(Seconds)),
  provider_max_tokens: v.optional(
    v.nullable(v.pipe(v.number('must be a number'), v.integer('must be an integer'), v.minValue(50), v.maxValue(4000))),
  ),
  fallback_to_rules: v.optional(v.nullable(v.boolean())),
});

export const AnalysisStatusSchema = v.object({
  enabled: v.boolean(),
  provider: Provider,
  provider_reachable: v.nullable(v.boolean()),
  rule_set_version: v.string(),
  queue_depth: v.number(),
  requests: v.object({ pending: v.number(), processing: v.number(), completed: v.number(), failed: v.number() }),
  last_failure: v.nullable(
    v.object({ id: v.string(), status: v.string(), error: v.nullable(v.string()), at: v.string() }),
  ),
});

export const TestAnalysisBody = v.strictObject({
  log: v.optional(v.pipe(v.string(), v.maxLength(100_000))),
  stdout: v.optional(v.pipe(v.string(), v.maxLength(100_000))),
  stderr: v.optional(v.pipe(v.string(), v.maxLength(100_000))),
  exit_code: v.optional(v.pipe(v.number(), v.integer(), v.minValue(-1), v.maxValue(255))),
  interpreter: v.optional(v.picklist(['sh', 'bash', 'node', 'python3'])),
  action_name: v.optional(v.pipe(v.string(), v.maxLength(200))),
});

export const TestAnalysisSchema = v.object({
  analysis: AnalysisObjectSchema,
  source: v.picklist(['rules', 'provider']),
});
