// The deployment's configuration in a plan: each setting the body gives, or its default; variables as sealed.
import type { DeploymentConfig } from '../types.js';
import type { CreateDeploymentCommand } from './command.js';

/** Defaults of the settings the body may omit (the spec gives none; docs/decisions.md). */
export const CONFIG_DEFAULTS = {
  targetMode: 'sequential',
  failureStrategy: 'stop_on_first_failure',
  rollbackStrategy: 'none',
  priority: 0,
  timeoutSeconds: 3600,
  maxRetries: 0,
  deploymentTimeoutSeconds: 0,
  targetTagsMatchAll: false,
} as const satisfies Partial<DeploymentConfig>;

/** The configuration the command describes; `variables` and `prompted_values` as resolveVariables sealed them. */
export const deploymentConfig = (
  command: CreateDeploymentCommand,
  variables: { readonly given: Record<string, string>; readonly prompted: Record<string, string> },
  tenantId: string | null,
  environmentId: string | null,
): DeploymentConfig => ({
  targetMode: command.target_mode ?? CONFIG_DEFAULTS.targetMode,
  failureStrategy: command.failure_strategy ?? CONFIG_DEFAULTS.failureStrategy,
  rollbackStrategy: command.rollback_strategy ?? CONFIG_DEFAULTS.rollbackStrategy,
  priority: command.priority ?? CONFIG_DEFAULTS.priority,
  timeoutSeconds: command.timeout_seconds ?? CONFIG_DEFAULTS.timeoutSeconds,
  maxRetries: command.max_retries ?? CONFIG_DEFAULTS.maxRetries,
  deploymentTimeoutSeconds: command.deployment_timeout_seconds ?? CONFIG_DEFAULTS.deploymentTimeoutSeconds,
  targetIds: [...(command.target_ids ?? [])],
  targetTags: (command.target_tags ?? []).map((t) => ({ key: t.key, value: t.value })),
  targetTagsMatchAll: command.target_tags_match_all ?? CONFIG_DEFAULTS.targetTagsMatchAll,
  variables: variables.given,
  promptedValues: variables.prompted,
  versionRequirement: command.version_requirement ?? null,
  tenantId,
  environmentId,
  bypassCache: command.bypass_cache ?? false,
});
