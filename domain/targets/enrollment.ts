// Enrollment: a user with targets:create asks for an enrollment token (shown once, reusable by any number of
// hosts until it expires, so a fleet can be provisioned with one token); an agent presents it once to register
// its host as a target and receives its own agent token (shown once; only its hash is stored).
import { ValidationError } from '../errors.js';
import { ForbiddenError, InvalidCredentialsError } from '../identity/errors.js';
import type { Caller } from '../identity/types.js';
import type { TargetsDeps } from './deps.js';
import { uniqueTags } from './targets.js';
import type { Tag, Target } from './types.js';

export const ENROLLMENT_TOKEN_PREFIX = 'det_';
export const AGENT_TOKEN_PREFIX = 'dpa_';
export const DEFAULT_ENROLLMENT_HOURS = 24;

export interface CreateEnrollmentTokenCommand {
  readonly tenant_id?: string | null | undefined;
  readonly environment_id?: string | null | undefined;
  readonly expires_in_hours?: number | undefined;
}

/** The tenant and environment new targets get: checked to exist, to agree, and to be the caller's. */
const scopeFor = async (deps: TargetsDeps, caller: Caller, command: CreateEnrollmentTokenCommand) => {
  let tenantId: string | null = null;
  if (command.tenant_id !== undefined && command.tenant_id !== null) {
    const tenant = await deps.tenants.findTenant(command.tenant_id);
    if (tenant === undefined) throw ValidationError.field('tenant_id', `There is no tenant '${command.tenant_id}'.`);
    tenantId = tenant.id;
  }
  if (caller.tenantId !== null) {
    if (tenantId !== null && tenantId !== caller.tenantId) throw new ForbiddenError('You can only enroll targets into your own tenant.', { reason: 'tenant_restriction' });
    tenantId = caller.tenantId;
  }
  let environmentId: string | null = null;
  if (command.environment_id !== undefined && command.environment_id !== null) {
    const environment = await deps.environments.findEnvironment(command.environment_id);
    const visible = environment !== undefined && (caller.tenantId === null || environment.tenantId === null || environment.tenantId === caller.tenantId);
    if (!visible) throw ValidationError.field('environment_id', `There is no environment '${command.environment_id}'.`);
    if (environment.tenantId !== null && tenantId !== null && environment.tenantId !== tenantId) {
      throw ValidationError.field('environment_id', 'The environment belongs to another tenant than tenant_id.');
    }
    environmentId = environment.id;
    tenantId ??= environment.tenantId;
  }
  return { tenantId, environmentId };
};

export const createEnrollmentToken = async (deps: TargetsDeps, caller: Caller, command: CreateEnrollmentTokenCommand) => {
  const { tenantId, environmentId } = await scopeFor(deps, caller, command);
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + (command.expires_in_hours ?? DEFAULT_ENROLLMENT_HOURS) * 3_600_000);
  const token = `${ENROLLMENT_TOKEN_PREFIX}${deps.random.random(32)}`;
  await deps.enrollmentTokens.create({
    tokenHash: deps.random.hash(token),
    tenantId,
    environmentId,
    createdBy: caller.userId,
    createdAt: now.toISOString(),
    expiresAt: expiresAt.toISOString(),
  });
  return { token, expires_at: expiresAt.toISOString(), tenant_id: tenantId, environment_id: environmentId };
};

export interface RegisterAgentCommand {
  readonly enrollment_token: string;
  readonly name: string;
  readonly hostname: string;
  readonly os: string;
  readonly arch: string;
  readonly agent_version: string;
  readonly tags: readonly Tag[];
}

export const registerAgent = async (deps: TargetsDeps, command: RegisterAgentCommand) => {
  const now = deps.clock.now();
  const enrollment = await deps.enrollmentTokens.get(deps.random.hash(command.enrollment_token));
  if (enrollment === undefined || Date.parse(enrollment.expiresAt) <= now.getTime()) {
    throw new InvalidCredentialsError('The enrollment token is unknown or expired; ask for a new one (POST /api/v1/targets/enrollment-tokens).');
  }
  const agentToken = `${AGENT_TOKEN_PREFIX}${deps.random.random(32)}`;
  const { id, shortId } = await deps.ids.next('target');
  const target: Target = {
    id,
    shortId,
    name: command.name,
    hostname: command.hostname,
    os: command.os,
    arch: command.arch,
    agentVersion: command.agent_version,
    tags: uniqueTags(command.tags),
    tenantId: enrollment.tenantId,
    environmentId: enrollment.environmentId,
    agentTokenHash: deps.random.hash(agentToken),
    // Registering proves the agent is alive: it is online from the first moment.
    lastHeartbeatAt: now.toISOString(),
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
  };
  await deps.targets.create(target);
  return { target_id: id, short_id: shortId, agent_token: agentToken };
};
