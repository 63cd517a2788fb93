// Errors of the deployments context (api.md "Errors": DEPLOYMENT_FROZEN and its details).
import { DomainError } from '../errors.js';
import type { Freeze } from '../tenancy/types.js';

/** One active freeze as DEPLOYMENT_FROZEN and the override record show it. */
export interface FrozenBy {
  readonly id: string;
  readonly name: string;
  readonly ends_at: string;
}

export const frozenBy = (freeze: Freeze): FrozenBy => ({ id: freeze.id, name: freeze.name, ends_at: freeze.endTime });

/** 409: active freezes match the deployment and it was not overridden. `can_override`: the caller may override. */
export class DeploymentFrozenError extends DomainError {
  readonly kind = 'conflict' as const;
  constructor(freezes: readonly Freeze[], canOverride: boolean) {
    const names = freezes.map((f) => `'${f.name}'`).join(', ');
    super(
      'DEPLOYMENT_FROZEN',
      canOverride
        ? `Deployments are frozen by ${names}. Wait until the freeze ends, or send override_freeze: true with an override_reason.`
        : `Deployments are frozen by ${names}. Wait until the freeze ends, or ask an administrator to override it.`,
      { active_freezes: freezes.map(frozenBy), can_override: canOverride },
    );
  }
}

/** Who may override a freeze, in words (the delegation rule: a credential needs the permission, not only the role). */
export const FREEZE_OVERRIDE_NEEDS =
  'override_freeze needs the admin role (an API key, OAuth token or trigger also needs the freezes:update scope)';

/**
 * 403 INSUFFICIENT_PERMISSIONS: `override_freeze` needs the admin role, and a delegated credential of an admin also
 * the `freezes:update` scope (a role, not only a permission, so its own class).
 */
export class FreezeOverrideNotAllowedError extends DomainError {
  readonly kind = 'forbidden' as const;
  constructor(delegated = false) {
    super('INSUFFICIENT_PERMISSIONS', `${FREEZE_OVERRIDE_NEEDS}.`, {
      required_role: 'admin',
      field: 'override_freeze',
      ...(delegated ? { required_permission: 'freezes:update' } : {}),
    });
  }
}
