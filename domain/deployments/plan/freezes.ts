// The freeze rules of a create: whether the deployment may start despite the freezes in force (and the override to
// keep), and the warnings a preview shows for them.
import { ValidationError } from '../../errors.js';
import { isUserSession, mayOverrideFreeze } from '../../identity/delegation.js';
import type { Caller } from '../../identity/types.js';
import type { Freeze } from '../../tenancy/types.js';
import { DeploymentFrozenError, FREEZE_OVERRIDE_NEEDS, FreezeOverrideNotAllowedError, frozenBy } from '../errors.js';
import type { FreezeOverride } from '../types.js';
import type { CreateDeploymentCommand, ResolvedDeployment } from './command.js';

/**
 * Whether the deployment may start despite active freezes. `override_freeze` by a caller who may not override
 * (mayOverrideFreeze: an admin session, or an admin's credential scoped to freezes:update) is 403
 * INSUFFICIENT_PERMISSIONS (whether or not a freeze is in force). No freeze: null. Freezes and no override: 409
 * DEPLOYMENT_FROZEN (can_override: the caller may override). An allowed override with a reason: the record to keep.
 */
export const checkFreezes = (
  resolved: Pick<ResolvedDeployment, 'activeFreezes'>,
  caller: Caller,
  command: Pick<CreateDeploymentCommand, 'override_freeze' | 'override_reason'>,
): FreezeOverride | null => {
  const admin = mayOverrideFreeze(caller);
  if (command.override_freeze === true && !admin) throw new FreezeOverrideNotAllowedError(!isUserSession(caller));
  const freezes = resolved.activeFreezes;
  if (freezes.length === 0) return null;
  if (command.override_freeze !== true) throw new DeploymentFrozenError(freezes, admin);
  const reason = command.override_reason?.trim() ?? '';
  if (reason === '')
    throw new ValidationError('override_reason is required when override_freeze is true.', [
      {
        field: 'override_reason',
        code: 'MISSING_FIELD',
        message: 'override_reason is required when override_freeze is true.',
      },
    ]);
  return { reason, by: caller.userId, freezes: freezes.map(frozenBy) };
};

/** What a preview says of the freezes in force and of an override_freeze the caller set. */
export const freezeWarnings = (
  freezes: readonly Freeze[],
  caller: Caller,
  command: Pick<CreateDeploymentCommand, 'override_freeze'>,
): string[] => [
  ...freezes.map(
    (f) => `Deployments are frozen by '${f.name}' until ${f.endTime}${f.reason === null ? '' : ` (${f.reason})`}.`,
  ),
  ...(command.override_freeze === true && !mayOverrideFreeze(caller)
    ? [`${FREEZE_OVERRIDE_NEEDS}: creating this deployment would answer 403.`]
    : []),
  ...(command.override_freeze === true && mayOverrideFreeze(caller) && freezes.length === 0
    ? ['override_freeze is set, but no freeze is in force.']
    : []),
];
