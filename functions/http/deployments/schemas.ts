// Request and response shapes of the deployments endpoints (api.md "Deployments", "Create body", "Redeploy body",
// "Deployment (list item and detail)", "Deployment preview result"). The body schemas hold every rule the body
// alone decides, cross-field ones included (exactly one source, at least one target selector, environment_id with
// tenant_id, override_reason with override_freeze); references (does the action exist, which targets match) are
// the domain's rules (domain/deployments/plan/).
//
// Cross-field rules run once every field is well-formed on its own (valibot runs a pipe's checks only after the
// object parsed), and all of them are reported together, each on its field.
import * as v from 'valibot';
import { variableNameProblem } from '../../../protocol/environment-names.js';
import { TagSchema } from '../targets/schemas.js';
import { MetaSchema } from '../../shared/schemas.js';

export { PathId } from '../../shared/schemas.js';

/** A record by UUID or short id. */
const RefId = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(64, 'must be at most 64 characters'),
);

const Int = (min: number, max: number) =>
  v.pipe(
    v.number('must be an integer'),
    v.integer('must be an integer'),
    v.minValue(min, `must be ${min} to ${max}`),
    v.maxValue(max, `must be ${min} to ${max}`),
  );

/** Limits the spec leaves open (api.md "Limits": not shown). */
export const DEPLOYMENT_LIMITS = {
  targetIds: 1000,
  targetTags: 50,
  variables: 100,
  variableValueChars: 16 * 1024,
  reasonChars: 2000,
  versionRequirementChars: 256,
  batchSize: 10_000,
  /** The overall timeout: at most 7 days (0 = none). */
  deploymentTimeoutSeconds: 7 * 24 * 3600,
} as const;

export const TARGET_MODES = ['sequential', 'parallel'] as const;
export const FAILURE_STRATEGIES = ['stop_on_first_failure', 'continue_on_failure', 'ignore_failures'] as const;
export const ROLLBACK_STRATEGIES = ['none', 'failed_target_only', 'all_executed'] as const;

/** `sequential`, `parallel`, or `{rolling: {batch_size}}` with batch_size >= 1. */
export const TargetModeSchema = v.union(
  [v.picklist(TARGET_MODES), v.object({ rolling: v.object({ batch_size: Int(1, DEPLOYMENT_LIMITS.batchSize) }) })],
  'must be "sequential", "parallel" or {"rolling": {"batch_size": n}} with n >= 1',
);
const FailureStrategy = v.picklist(FAILURE_STRATEGIES, `must be one of ${FAILURE_STRATEGIES.join(', ')}`);
const RollbackStrategy = v.picklist(ROLLBACK_STRATEGIES, `must be one of ${ROLLBACK_STRATEGIES.join(', ')}`);

/** A value: a string; numbers and booleans are taken as their text (`8080` -> "8080"). */
const VariableValue = v.pipe(
  v.union([v.string(), v.number(), v.boolean()], 'must be a string'),
  v.transform(String),
  v.maxLength(
    DEPLOYMENT_LIMITS.variableValueChars,
    `must be at most ${DEPLOYMENT_LIMITS.variableValueChars} characters`,
  ),
);
const isPlainObject = (input: unknown): input is Record<string, unknown> =>
  typeof input === 'object' && input !== null && !Array.isArray(input);
/**
 * name -> value, built from the raw body's own keys: every name is checked against environment-names.ts (so
 * `__proto__` is refused by name, field `variables.__proto__`), and `constructor` or `valueOf` stay ordinary names
 * (valibot's record would drop `__proto__`, `constructor` and `prototype` silently).
 */
const Variables = v.pipe(
  v.custom<Record<string, unknown>>(isPlainObject, 'must be an object of name to value'),
  v.description('An object of variable name to value (a string; numbers and booleans are taken as text).'),
  // What the document shows for the custom check above (its keys reach the JSON Schema as they are).
  v.metadata({
    type: 'object',
    additionalProperties: { type: ['string', 'number', 'boolean'], maxLength: DEPLOYMENT_LIMITS.variableValueChars },
    maxProperties: DEPLOYMENT_LIMITS.variables,
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const input = dataset.value;
    for (const key of Object.keys(input)) {
      const message = variableNameProblem(key);
      if (message !== undefined)
        addIssue({ message, path: [{ type: 'object', origin: 'key', input, key, value: input[key] }] });
    }
  }),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const input = dataset.value;
    const entries: [string, string][] = [];
    let failed = false;
    for (const [key, raw] of Object.entries(input)) {
      const parsed = v.safeParse(VariableValue, raw);
      if (parsed.success) entries.push([key, parsed.output]);
      else {
        failed = true;
        addIssue({
          message: parsed.issues[0].message,
          path: [{ type: 'object', origin: 'value', input, key, value: raw }],
        });
      }
    }
    return failed ? NEVER : (Object.fromEntries(entries) as Record<string, string>);
  }),
  v.check(
    (map) => Object.keys(map).length <= DEPLOYMENT_LIMITS.variables,
    `at most ${DEPLOYMENT_LIMITS.variables} variables`,
  ),
);

const TargetIds = v.pipe(
  v.array(RefId, 'must be an array of target ids'),
  v.maxLength(DEPLOYMENT_LIMITS.targetIds, `at most ${DEPLOYMENT_LIMITS.targetIds} targets`),
);
const TargetTags = v.pipe(
  v.array(TagSchema, 'must be an array of {key, value}'),
  v.maxLength(DEPLOYMENT_LIMITS.targetTags, `at most ${DEPLOYMENT_LIMITS.targetTags} tags`),
);
const Flag = v.optional(v.boolean('must be true or false'));
const Reason = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.maxLength(DEPLOYMENT_LIMITS.reasonChars, `must be at most ${DEPLOYMENT_LIMITS.reasonChars} characters`),
);

/** The settings create and redeploy share, with the spec's ranges. */
const settings = {
  target_ids: v.optional(TargetIds),
  target_tags: v.optional(TargetTags),
  target_mode: v.optional(TargetModeSchema),
  failure_strategy: v.optional(FailureStrategy),
  rollback_strategy: v.optional(RollbackStrategy),
  priority: v.optional(Int(-100, 100)),
  timeout_seconds: v.optional(Int(1, 86_400)),
  max_retries: v.optional(Int(0, 10)),
  variables: v.optional(Variables),
  prompted_values: v.optional(Variables),
  bypass_cache: Flag,
  override_freeze: Flag,
  override_reason: v.optional(v.nullable(Reason)),
};

// ---- cross-field rules -------------------------------------------------------------------------------------

type Body = Record<string, unknown>;
interface Problem {
  readonly field: string;
  readonly message: string;
  /** Reported as MISSING_FIELD (the field is required here and absent or null). */
  readonly missing?: boolean;
}

const given = (body: Body, key: string): boolean => body[key] !== undefined && body[key] !== null;
const nonEmpty = (body: Body, key: string): boolean => Array.isArray(body[key]) && (body[key] as unknown[]).length > 0;

export const SOURCE_FIELDS = ['solution_id', 'sequence_id', 'action_id'] as const;

const overrideReasonProblems = (body: Body): Problem[] => {
  if (body['override_freeze'] !== true) return [];
  const reason = body['override_reason'];
  if (reason === undefined || reason === null)
    return [
      { field: 'override_reason', message: 'override_reason is required when override_freeze is true.', missing: true },
    ];
  if (reason === '') return [{ field: 'override_reason', message: 'must not be empty when override_freeze is true' }];
  return [];
};

const createProblems = (body: Body): Problem[] => {
  const problems: Problem[] = [];
  const sources = SOURCE_FIELDS.filter((key) => given(body, key));
  if (sources.length !== 1) {
    const message =
      sources.length === 0
        ? 'Give exactly one of solution_id, sequence_id and action_id.'
        : `Give only one of ${sources.join(', ')}.`;
    for (const field of sources.length === 0 ? SOURCE_FIELDS : sources) problems.push({ field, message });
  }
  if (!nonEmpty(body, 'target_ids') && !nonEmpty(body, 'target_tags')) {
    const message = 'Give target_ids or target_tags (at least one target).';
    problems.push({ field: 'target_ids', message }, { field: 'target_tags', message });
  }
  if (given(body, 'tenant_id') && !given(body, 'environment_id')) {
    problems.push({
      field: 'environment_id',
      message: 'environment_id is required when tenant_id is given.',
      missing: true,
    });
  }
  return [...problems, ...overrideReasonProblems(body)];
};

const redeployProblems = (body: Body): Problem[] => {
  const problems: Problem[] = [];
  const selectors = (['target_ids', 'target_tags'] as const).filter((key) => body[key] !== undefined);
  if (selectors.length > 0 && !selectors.some((key) => nonEmpty(body, key))) {
    for (const field of selectors)
      problems.push({
        field,
        message: 'Give at least one target: target_ids or target_tags replace the original selection.',
      });
  }
  return [...problems, ...overrideReasonProblems(body)];
};

/**
 * Adds each problem as an issue on its field. A missing one is reported as functions/shared/validation.ts
 * recognises a missing key (input undefined, the parent without the key), so it becomes MISSING_FIELD.
 */
const crossField = (rules: (body: Body) => Problem[]) =>
  v.rawCheck<Body>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const body = dataset.value;
    for (const problem of rules(body)) {
      const { [problem.field]: _dropped, ...withoutField } = body;
      addIssue({
        message: problem.message,
        input: problem.missing === true ? undefined : body[problem.field],
        path: [
          problem.missing === true
            ? { type: 'object', origin: 'value', input: withoutField, key: problem.field, value: undefined }
            : { type: 'unknown', origin: 'value', input: body, key: problem.field, value: body[problem.field] },
        ],
      });
    }
  });

// ---- bodies --------------------------------------------------------------------------------------------------

/** api.md "Create body"; also the preview's body. */
export const CreateDeploymentBody = v.pipe(
  v.object({
    solution_id: v.optional(v.nullable(RefId)),
    sequence_id: v.optional(v.nullable(RefId)),
    action_id: v.optional(v.nullable(RefId)),
    version_requirement: v.optional(
      v.nullable(
        v.pipe(
          v.string('must be a string'),
          v.trim(),
          v.maxLength(
            DEPLOYMENT_LIMITS.versionRequirementChars,
            `must be at most ${DEPLOYMENT_LIMITS.versionRequirementChars} characters`,
          ),
        ),
      ),
    ),
    ...settings,
    target_tags_match_all: Flag,
    deployment_timeout_seconds: v.optional(Int(0, DEPLOYMENT_LIMITS.deploymentTimeoutSeconds)),
    tenant_id: v.optional(v.nullable(RefId)),
    environment_id: v.optional(v.nullable(RefId)),
    dry_run: Flag,
  }),
  crossField(createProblems),
);
export type CreateDeploymentBody = v.InferOutput<typeof CreateDeploymentBody>;

/** api.md "Redeploy body": all optional; given fields override the original's (variables are merged). */
export const RedeployBody = v.optional(
  v.pipe(
    v.object({
      ...settings,
      environment_id: v.optional(RefId),
    }),
    crossField(redeployProblems),
  ),
  {},
);
export type RedeployBody = v.InferOutput<typeof RedeployBody>;

// ---- responses -----------------------------------------------------------------------------------------------

const Nullable = v.nullable(v.string());

export const PlanStepSchema = v.object({
  id: v.string(),
  target_id: v.string(),
  target_name: v.string(),
  sequence_id: Nullable,
  sequence_name: Nullable,
  sequence_order: v.number(),
  action_id: v.string(),
  action_name: v.string(),
  action_version: v.string(),
  action_order: v.number(),
  state: v.string(),
  started_at: Nullable,
  completed_at: Nullable,
  exit_code: v.nullable(v.number()),
  error_message: Nullable,
  retry_count: v.number(),
  duration_ms: v.nullable(v.number()),
});

export const PlanSchema = v.object({
  target_count: v.number(),
  steps: v.array(PlanStepSchema),
  /** Only when planning had something to say that the deployment keeps (a redeploy's dropped variables). */
  warnings: v.optional(v.array(v.string())),
  /** Name -> value; secret values are `***`. */
  resolved_variables: v.record(v.string(), v.string()),
  tenant_name: Nullable,
  environment_name: Nullable,
  created_at: v.string(),
});

export const DeploymentConfigSchema = v.object({
  target_mode: TargetModeSchema,
  failure_strategy: FailureStrategy,
  rollback_strategy: RollbackStrategy,
  priority: v.number(),
  timeout_seconds: v.number(),
  max_retries: v.number(),
  deployment_timeout_seconds: v.number(),
  target_ids: v.array(v.string()),
  target_tags: v.array(v.object({ key: v.string(), value: v.string() })),
  target_tags_match_all: v.boolean(),
  /** As given; secret values are `***`. */
  variables: v.record(v.string(), v.string()),
  tenant_id: Nullable,
  environment_id: Nullable,
});

const FrozenBySchema = v.object({ id: v.string(), name: v.string(), ends_at: v.string() });

/** The list item (views.ts deploymentView). */
export const DeploymentSchema = v.object({
  id: v.string(),
  short_id: v.string(),
  source_type: v.picklist(['solution', 'sequence', 'action']),
  solution_id: Nullable,
  solution_name: Nullable,
  solution_version: Nullable,
  sequence_id: Nullable,
  sequence_name: Nullable,
  sequence_version: Nullable,
  action_id: Nullable,
  action_name: Nullable,
  action_version: Nullable,
  state: v.string(),
  progress: v.number(),
  total_steps: v.number(),
  completed_steps: v.number(),
  failed_steps: v.number(),
  tenant_id: Nullable,
  tenant_name: Nullable,
  environment_id: Nullable,
  environment_name: Nullable,
  triggered_by: v.string(),
  /** Added to the spec: the triggerer's display name (else username) when it was created; the id for older records. */
  triggered_by_name: v.string(),
  created_at: v.string(),
  started_at: Nullable,
  completed_at: Nullable,
  duration_ms: v.nullable(v.number()),
});

/** The detail record (views.ts deploymentDetailView): get, cancel, redeploy, and a started create's `deployment`. */
export const DeploymentDetailSchema = v.object({
  ...DeploymentSchema.entries,
  config: DeploymentConfigSchema,
  /** null in cancel and redeploy answers. */
  plan: v.nullable(PlanSchema),
  error_message: Nullable,
  analysis_enabled: v.boolean(),
  /** Only on a deployment created by redeploy. */
  source_deployment_id: v.optional(v.string()),
  /** Only on a cancelled deployment whose cancel gave a reason. */
  cancel_reason: v.optional(v.string()),
  /** Only when an admin created it past an active freeze. */
  freeze_override: v.optional(v.object({ reason: v.string(), by: v.string(), freezes: v.array(FrozenBySchema) })),
});

export const DeploymentListSchema = v.object({
  data: v.array(DeploymentSchema),
  meta: MetaSchema,
  status_counts: v.object({
    all: v.number(),
    running: v.number(),
    failed: v.number(),
    succeeded: v.number(),
    other: v.number(),
  }),
});

/** api.md "Create-deployment responses": started. */
export const DeploymentStartedSchema = v.object({
  deployment_id: v.string(),
  pending: v.literal(false),
  message: v.string(),
  deployment: DeploymentDetailSchema,
});

/** api.md "Create-deployment responses": queued. */
export const DeploymentQueuedSchema = v.object({
  pending_request_id: v.string(),
  pending: v.literal(true),
  message: v.string(),
});

/** api.md "Deployment preview result", plus `active_freezes` (what a create would answer 409 for). */
export const DeploymentPreviewSchema = v.object({
  plan: PlanSchema,
  warnings: v.array(v.string()),
  target_summary: v.object({ total: v.number(), online: v.number(), offline: v.number(), stale: v.number() }),
  /** Resolved variables, name -> value; secret values are `***`. */
  variables: v.record(v.string(), v.string()),
  source_type: v.picklist(['solution', 'sequence', 'action']),
  source_name: v.string(),
  source_version: v.string(),
  active_freezes: v.array(FrozenBySchema),
});
export type DeploymentPreview = v.InferOutput<typeof DeploymentPreviewSchema>;

/** api.md "Create-deployment responses": a dry run (dry_run: true): the plan, nothing created. */
export const DeploymentDryRunSchema = v.object({
  dry_run: v.literal(true),
  valid: v.literal(true),
  plan: PlanSchema,
  warnings: v.array(v.string()),
  target_summary: v.object({ total: v.number(), online: v.number(), offline: v.number(), stale: v.number() }),
});

const PendingTime = v.pipe(v.string(), v.description('YYYY-MM-DD HH:MM:SS, no zone (UTC)'));

/** api.md "Pending dispatch request" (views.ts pendingRequestView): unset optional members are omitted. */
export const PendingRequestSchema = v.object({
  id: v.string(),
  tenant_id: v.optional(v.string()),
  tenant_name: v.optional(v.string()),
  environment_id: v.optional(v.string()),
  environment_name: v.optional(v.string()),
  triggered_by: v.optional(v.string()),
  /** Added to the spec: as a deployment's `triggered_by_name`. */
  triggered_by_name: v.optional(v.string()),
  last_retry_at: v.optional(PendingTime),
  error_message: v.optional(v.string()),
  deployment_id: v.optional(v.string()),
  dispatched_at: v.optional(PendingTime),
  dispatched_to_instance_id: v.optional(v.string()),
  /** Added to the spec: what is queued, the source as resolved at create and the number of targets it plans. */
  source_type: v.optional(v.string()),
  source_name: v.optional(v.string()),
  source_version: v.optional(v.string()),
  target_count: v.optional(v.number()),
  /** Why a waiting request is passed over at dispatch (an active freeze), and until when (ISO 8601, +00:00). */
  waiting_reason: v.optional(v.string()),
  waiting_until: v.optional(v.string()),
  queued_at: PendingTime,
  retry_count: v.number(),
  status: v.picklist(['pending', 'processing', 'dispatched', 'cancelled', 'failed']),
  created_at: PendingTime,
  priority: v.number(),
  /** Only on a waiting (pending) request: 1 is the next to dispatch. */
  queue_position: v.optional(v.number()),
});

const NullableRecord = v.nullable(v.record(v.string(), v.unknown()));

/** api.md "Historical log entry" (domain/deployments/log-history.ts HistoryEntry). */
export const HistoryEntrySchema = v.object({
  id: v.string(),
  seq: v.number(),
  timestamp: v.pipe(v.string(), v.description('ISO 8601 with a +00:00 offset')),
  level: v.string(),
  event_type: v.string(),
  step_id: Nullable,
  target_id: Nullable,
  target_name: Nullable,
  message: Nullable,
  stdout: Nullable,
  stderr: Nullable,
  metadata: NullableRecord,
  analysis: NullableRecord,
});
