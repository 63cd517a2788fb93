// How deployments and pending requests look on the wire (api.md "Resources and their fields").
import type { Deployment, DeploymentConfig, PendingRequest, Plan, PlanStep, SourceRef } from './types.js';

const source = (ref: SourceRef | null, prefix: 'solution' | 'sequence' | 'action') => ({
  [`${prefix}_id`]: ref?.id ?? null,
  [`${prefix}_name`]: ref?.name ?? null,
  [`${prefix}_version`]: ref?.version ?? null,
});

/** The list item. */
export const deploymentView = (d: Deployment) => ({
  id: d.id,
  short_id: d.shortId,
  source_type: d.sourceType,
  ...source(d.solution, 'solution'),
  ...source(d.sequence, 'sequence'),
  ...source(d.action, 'action'),
  state: d.state,
  progress: d.progress,
  total_steps: d.totalSteps,
  completed_steps: d.completedSteps,
  failed_steps: d.failedSteps,
  tenant_id: d.tenantId,
  tenant_name: d.tenantName,
  environment_id: d.environmentId,
  environment_name: d.environmentName,
  triggered_by: d.triggeredBy,
  // Stored at creation (no user read per item); records from before it show the id.
  triggered_by_name: d.triggeredByName ?? d.triggeredBy,
  created_at: d.createdAt,
  started_at: d.startedAt,
  completed_at: d.completedAt,
  duration_ms: d.durationMs,
});

/** `secret`: whether a variable is secret (the plan's stored flag, never the value's look). */
export const configView = (c: DeploymentConfig, secret: (name: string) => boolean = () => false) => ({
  target_mode: c.targetMode,
  failure_strategy: c.failureStrategy,
  rollback_strategy: c.rollbackStrategy,
  priority: c.priority,
  timeout_seconds: c.timeoutSeconds,
  max_retries: c.maxRetries,
  deployment_timeout_seconds: c.deploymentTimeoutSeconds,
  target_ids: [...c.targetIds],
  target_tags: c.targetTags.map((t) => ({ key: t.key, value: t.value })),
  target_tags_match_all: c.targetTagsMatchAll,
  variables: maskedConfigVariables(c, secret),
  tenant_id: c.tenantId,
  environment_id: c.environmentId,
});

/** Deployment variables as given; the values of secret ones (encrypted at rest) are never shown. */
const maskedConfigVariables = (c: DeploymentConfig, secret: (name: string) => boolean): Record<string, string> =>
  Object.fromEntries(Object.entries(c.variables).map(([name, value]) => [name, secret(name) ? SECRET_MASK : value]));

/** Whether `name` is a secret variable of the plan: the stored flag (`NOTE=enc:x` is an ordinary value). */
export const isSecretVariable = (p: Pick<Plan, 'resolvedVariables'>, name: string): boolean =>
  Object.hasOwn(p.resolvedVariables, name) && p.resolvedVariables[name]?.secret === true;

export const SECRET_MASK = '***';

export const stepView = (s: PlanStep) => ({
  id: s.id,
  target_id: s.targetId,
  target_name: s.targetName,
  sequence_id: s.sequenceId,
  sequence_name: s.sequenceName,
  sequence_order: s.sequenceOrder,
  action_id: s.actionId,
  action_name: s.actionName,
  action_version: s.actionVersion,
  action_order: s.actionOrder,
  state: s.state,
  started_at: s.startedAt,
  completed_at: s.completedAt,
  exit_code: s.exitCode,
  error_message: s.errorMessage,
  retry_count: s.retryCount,
  duration_ms: s.durationMs,
  ...(s.rollbackOf === undefined ? {} : { rollback_of: s.rollbackOf }),
});

export const planView = (p: Plan) => ({
  target_count: p.targetCount,
  steps: p.steps.map(stepView),
  ...(p.warnings === undefined || p.warnings.length === 0 ? {} : { warnings: [...p.warnings] }),
  resolved_variables: Object.fromEntries(
    Object.entries(p.resolvedVariables).map(([name, v]) => [name, v.secret ? SECRET_MASK : v.value]),
  ),
  tenant_name: p.tenantName,
  environment_name: p.environmentName,
  created_at: p.createdAt,
});

/** The detail record; `plan: false` for cancel and redeploy answers (the spec's `plan: null`). */
export const deploymentDetailView = (d: Deployment, options: { plan: boolean } = { plan: true }) => ({
  ...deploymentView(d),
  config: configView(d.config, (name) => isSecretVariable(d.plan, name)),
  plan: options.plan ? planView(d.plan) : null,
  error_message: d.errorMessage,
  analysis_enabled: d.analysisEnabled,
  ...(d.sourceDeploymentId === null ? {} : { source_deployment_id: d.sourceDeploymentId }),
  ...(d.cancelReason === null ? {} : { cancel_reason: d.cancelReason }),
  ...(d.freezeOverride === null
    ? {}
    : {
        freeze_override: {
          reason: d.freezeOverride.reason,
          by: d.freezeOverride.by,
          freezes: d.freezeOverride.freezes,
        },
      }),
});

/** `YYYY-MM-DD HH:MM:SS`, UTC, no zone (the spec's pending-request format). */
export const pendingTime = (iso: string): string => iso.slice(0, 19).replace('T', ' ');

/** A pending dispatch request; unset optional fields are omitted. `position` (1 = next) only while pending. */
export const pendingRequestView = (r: PendingRequest, position?: number) => {
  const optional: Record<string, string | number> = {};
  const put = (key: string, value: string | number | null) => {
    if (value !== null) optional[key] = value;
  };
  put('tenant_id', r.tenantId);
  put('tenant_name', r.tenantName);
  put('environment_id', r.environmentId);
  put('environment_name', r.environmentName);
  put('triggered_by', r.triggeredBy);
  put('triggered_by_name', r.triggeredByName ?? r.triggeredBy);
  // What is queued (added to the spec): the source as it was resolved at create, and how many targets it plans.
  const source = r.draft.action ?? r.draft.sequence ?? r.draft.solution;
  put('source_type', r.draft.sourceType);
  put('source_name', source?.name ?? null);
  put('source_version', source?.version ?? null);
  put('target_count', r.draft.plan.targetCount);
  put('last_retry_at', r.lastRetryAt === null ? null : pendingTime(r.lastRetryAt));
  put('error_message', r.errorMessage);
  put('deployment_id', r.deploymentId);
  put('dispatched_at', r.dispatchedAt === null ? null : pendingTime(r.dispatchedAt));
  put('dispatched_to_instance_id', r.dispatchedToInstanceId);
  // Why a pending request is passed over at dispatch (an active freeze), and until when (ISO 8601, +00:00).
  if (r.status === 'pending') {
    put('waiting_reason', r.waitingReason ?? null);
    put('waiting_until', r.waitingUntil ?? null);
  }
  return {
    id: r.id,
    ...optional,
    queued_at: pendingTime(r.queuedAt),
    retry_count: r.retryCount,
    status: r.status,
    created_at: pendingTime(r.createdAt),
    priority: r.priority,
    ...(position === undefined ? {} : { queue_position: position }),
  };
};
