// A redeploy's plan: which of the original's secret values the caller may reuse, which variables it carries over,
// and the create command it resolves (the original's source and configuration with the overrides applied).
import { mayReuseSecretsOf } from '../../identity/delegation.js';
import type { SecretCipher } from '../../identity/ports.js';
import type { Caller } from '../../identity/types.js';
import { openVariable } from '../../shared/variable-secrets.js';
import type { DeploymentDraft } from '../types.js';
import { isSecretVariable } from '../views.js';
import type { CreateDeploymentCommand, RedeployOverrides } from './command.js';
import { invalid, problem } from './problems.js';
import type { ResolveOptions } from './variables.js';

export const secretReuseMessage = (name: string): string =>
  `Secret variable ${name} must be given again: only the original triggerer, or an admin signed in as a user (not with an API key, OAuth token or trigger), may reuse it`;

/**
 * A redeploy reuses no secret value unless mayReuseSecretsOf (the original triggerer with any credential, or a user
 * session with the admin role): each secret variable that had a value must be given again (`variables` or
 * `prompted_values`), else a 400 with one field per missing one. Whether the original's secrets may be reused.
 */
export const checkSecretReuse = (
  caller: Caller,
  original: Pick<DeploymentDraft, 'triggeredBy'> & {
    readonly plan: Pick<DeploymentDraft['plan'], 'resolvedVariables'>;
  },
  overrides: Pick<RedeployOverrides, 'variables' | 'prompted_values'>,
): { readonly reuseSecrets: boolean } => {
  if (mayReuseSecretsOf(caller, original.triggeredBy)) return { reuseSecrets: true };
  const given = (name: string) =>
    Object.hasOwn(overrides.variables ?? {}, name) || Object.hasOwn(overrides.prompted_values ?? {}, name);
  const missing = Object.entries(original.plan.resolvedVariables)
    .filter(([name, v]) => v.secret && !given(name))
    .map(([name]) => name);
  invalid(
    missing.map((name) => problem(`variables.${name}`, secretReuseMessage(name))),
    'Secret variables must be given again.',
  );
  return { reuseSecrets: false };
};

/**
 * The names of `variables` and `prompted_values` a merged redeploy carries over from the original without the
 * caller giving them again: resolveDeployment drops those the new plan no longer declares (with a warning).
 */
export const inheritedVariables = (
  original: Pick<DeploymentDraft, 'config'>,
  overrides: Pick<RedeployOverrides, 'variables' | 'prompted_values'>,
): NonNullable<ResolveOptions['inherited']> => {
  const carried = (stored: Readonly<Record<string, string>>, given: Readonly<Record<string, string>> | undefined) =>
    new Set(Object.keys(stored).filter((name) => given === undefined || !Object.hasOwn(given, name)));
  return {
    variables: carried(original.config.variables, overrides.variables),
    prompted_values: carried(original.config.promptedValues, overrides.prompted_values),
  };
};

/**
 * The create command a redeploy resolves: the original's source and configuration, with the overrides applied.
 * `variables` and `prompted_values` are merged (the original's, decrypted, then the given ones); every other given
 * field replaces the original's. target_ids / target_tags replace the whole target selection (giving only one
 * clears the other). The freeze override is never copied: a redeploy states its own. The version requirement is
 * the original's, so `^1.2` may pick a newer version than the original ran.
 */
export const mergeRedeploy = (
  cipher: SecretCipher,
  original: Pick<DeploymentDraft, 'sourceType' | 'solution' | 'sequence' | 'action' | 'config'> & {
    readonly plan: Pick<DeploymentDraft['plan'], 'resolvedVariables'>;
  },
  overrides: RedeployOverrides,
  options: { readonly reuseSecrets: boolean } = { reuseSecrets: true },
): CreateDeploymentCommand => {
  const c = original.config;
  const secret = (name: string) => isSecretVariable(original.plan, name);
  const open = (map: Readonly<Record<string, string>>) =>
    Object.fromEntries(
      Object.entries(map)
        .filter(([name]) => options.reuseSecrets || !secret(name))
        .map(([name, value]) => [name, openVariable(cipher, value, secret(name))]),
    );
  const retarget = overrides.target_ids !== undefined || overrides.target_tags !== undefined;
  return {
    solution_id: original.sourceType === 'solution' ? (original.solution?.id ?? null) : null,
    sequence_id: original.sourceType === 'sequence' ? (original.sequence?.id ?? null) : null,
    action_id: original.sourceType === 'action' ? (original.action?.id ?? null) : null,
    version_requirement: c.versionRequirement,
    target_ids: retarget ? [...(overrides.target_ids ?? [])] : [...c.targetIds],
    target_tags: retarget ? [...(overrides.target_tags ?? [])] : [...c.targetTags],
    target_tags_match_all: c.targetTagsMatchAll,
    target_mode: overrides.target_mode ?? c.targetMode,
    failure_strategy: overrides.failure_strategy ?? c.failureStrategy,
    rollback_strategy: overrides.rollback_strategy ?? c.rollbackStrategy,
    priority: overrides.priority ?? c.priority,
    timeout_seconds: overrides.timeout_seconds ?? c.timeoutSeconds,
    max_retries: overrides.max_retries ?? c.maxRetries,
    deployment_timeout_seconds: c.deploymentTimeoutSeconds,
    variables: { ...open(c.variables), ...(overrides.variables ?? {}) },
    prompted_values: { ...open(c.promptedValues), ...(overrides.prompted_values ?? {}) },
    tenant_id: c.tenantId,
    environment_id: overrides.environment_id ?? c.environmentId,
    bypass_cache: overrides.bypass_cache ?? c.bypassCache,
    dry_run: false,
    override_freeze: overrides.override_freeze ?? false,
    override_reason: overrides.override_reason ?? null,
  };
};
