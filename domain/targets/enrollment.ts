// Enrollment: a user with targets:create asks for an enrollment token (shown once) that fixes everything a new
// target gets: tenant, environment and tags. It allows `max_uses` registrations (default 1; a fleet asks for
// more), each taking one use with a conditional write, until it expires or is revoked. An agent presents it once
// to register its host and receives its own agent token (shown once; only its hash is stored). The tags an agent
// sends are a hint the server ignores: an agent cannot choose the deployments it receives.
import { NotFoundError, ValidationError } from '../errors.js';
import { ForbiddenError, InvalidCredentialsError } from '../identity/errors.js';
import type { Caller } from '../identity/types.js';
import { checkAgentVersion, parseAgentVersion } from './compatibility.js';
import type { TargetsDeps } from './deps.js';
import { uniqueTags } from './tags.js';
import type { PageRequest } from '../shared/pagination.js';
import { pageOf } from '../shared/pagination.js';
import type { EnrollmentToken, Tag, Target } from './types.js';

export const ENROLLMENT_TOKEN_PREFIX = 'det_';
export const AGENT_TOKEN_PREFIX = 'dpa_';
export const DEFAULT_ENROLLMENT_HOURS = 24;
export const DEFAULT_ENROLLMENT_MAX_USES = 1;
export const MAX_ENROLLMENT_USES = 1000;

export interface CreateEnrollmentTokenCommand {
  readonly tenant_id?: string | null | undefined;
  readonly environment_id?: string | null | undefined;
  readonly expires_in_hours?: number | undefined;
  readonly tags?: readonly Tag[] | undefined;
  readonly max_uses?: number | undefined;
  readonly description?: string | null | undefined;
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
    if (tenantId !== null && tenantId !== caller.tenantId)
      throw new ForbiddenError('You can only enroll targets into your own tenant.', { reason: 'tenant_restriction' });
    tenantId = caller.tenantId;
  }
  let environmentId: string | null = null;
  if (command.environment_id !== undefined && command.environment_id !== null) {
    const environment = await deps.environments.findEnvironment(command.environment_id);
    const visible =
      environment !== undefined &&
      (caller.tenantId === null || environment.tenantId === null || environment.tenantId === caller.tenantId);
    if (!visible) throw ValidationError.field('environment_id', `There is no environment '${command.environment_id}'.`);
    if (environment.tenantId !== null && tenantId !== null && environment.tenantId !== tenantId) {
      throw ValidationError.field('environment_id', 'The environment belongs to another tenant than tenant_id.');
    }
    environmentId = environment.id;
    tenantId ??= environment.tenantId;
  }
  return { tenantId, environmentId };
};

/** A description as stored: trimmed, and null when blank. */
const descriptionOf = (text: string | null | undefined): string | null => {
  const trimmed = text?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
};

export const createEnrollmentToken = async (
  deps: TargetsDeps,
  caller: Caller,
  command: CreateEnrollmentTokenCommand,
) => {
  const { tenantId, environmentId } = await scopeFor(deps, caller, command);
  const maxUses = command.max_uses ?? DEFAULT_ENROLLMENT_MAX_USES;
  if (!Number.isInteger(maxUses) || maxUses < 1 || maxUses > MAX_ENROLLMENT_USES) {
    throw ValidationError.field('max_uses', `must be an integer from 1 to ${MAX_ENROLLMENT_USES}`);
  }
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + (command.expires_in_hours ?? DEFAULT_ENROLLMENT_HOURS) * 3_600_000);
  const token = `${ENROLLMENT_TOKEN_PREFIX}${deps.random.random(32)}`;
  const { id } = await deps.ids.next('enrollment_token');
  const stored: EnrollmentToken = {
    id,
    tokenHash: deps.random.hash(token),
    tags: uniqueTags(command.tags ?? []),
    maxUses,
    uses: 0,
    tenantId,
    environmentId,
    description: descriptionOf(command.description),
    createdBy: caller.userId,
    ...(caller.userName === undefined ? {} : { createdByName: caller.userName }),
    createdAt: now.toISOString(),
    expiresAt: expiresAt.toISOString(),
  };
  await deps.enrollmentTokens.create(stored);
  return { ...enrollmentTokenView(stored), token };
};

/** What lists show of a token: never the secret nor its hash. */
export const enrollmentTokenView = (t: EnrollmentToken) => ({
  id: t.id,
  tenant_id: t.tenantId,
  environment_id: t.environmentId,
  tags: t.tags,
  uses: t.uses,
  max_uses: t.maxUses,
  expires_at: t.expiresAt,
  description: t.description ?? null,
  created_by: t.createdBy,
  created_by_name: t.createdByName ?? t.createdBy,
  created_at: t.createdAt,
});

const tokenVisibleTo = (caller: Caller, token: EnrollmentToken) =>
  caller.tenantId === null || token.tenantId === caller.tenantId;

/** Every token the caller may see (a tenant-scoped caller: its tenant's only), oldest first, expired ones included until they are removed. */
export const listEnrollmentTokens = async (
  deps: Pick<TargetsDeps, 'enrollmentTokens'>,
  caller: Caller,
  query: PageRequest,
) => {
  const tokens = (await deps.enrollmentTokens.listAll())
    .filter((t) => tokenVisibleTo(caller, t))
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  const page = pageOf(tokens, query);
  return { data: page.data.map(enrollmentTokenView), meta: page.meta };
};

/** Revokes a token: 404 when unknown or another tenant's. */
export const revokeEnrollmentToken = async (
  deps: Pick<TargetsDeps, 'enrollmentTokens'>,
  caller: Caller,
  id: string,
) => {
  const token = await deps.enrollmentTokens.findById(id);
  if (token === undefined || !tokenVisibleTo(caller, token)) throw new NotFoundError('Enrollment token', id);
  await deps.enrollmentTokens.delete(token);
};

export interface RegisterAgentCommand {
  readonly enrollment_token: string;
  readonly name: string;
  readonly hostname: string;
  readonly os: string;
  readonly arch: string;
  readonly agent_version: string;
  /** Sent by agents as a hint; not applied (the token's tags are). */
  readonly tags?: readonly Tag[] | undefined;
}

/**
 * Registers an agent's host. An agent of another major version than the server's (its `agent_version`, or the version
 * its x-deployer-agent-version header names, `headerVersion`) is refused (409) before the token is looked at, so the
 * refusal takes none of its uses.
 */
export const registerAgent = async (deps: TargetsDeps, command: RegisterAgentCommand, headerVersion?: string) => {
  checkAgentVersion(parseAgentVersion(command.agent_version, 'agent_version'), deps.settings.serverVersion);
  if (headerVersion !== undefined) checkAgentVersion(headerVersion, deps.settings.serverVersion);
  const now = deps.clock.now();
  const refused = () =>
    new InvalidCredentialsError(
      'The enrollment token is unknown, expired, revoked or used up; ask for a new one (POST /api/v1/targets/enrollment-tokens).',
    );
  const tokenHash = deps.random.hash(command.enrollment_token);
  const enrollment = await deps.enrollmentTokens.get(tokenHash);
  if (
    enrollment === undefined ||
    Date.parse(enrollment.expiresAt) <= now.getTime() ||
    enrollment.uses >= enrollment.maxUses
  )
    throw refused();
  // One use per registration, taken conditionally (uses < max_uses): concurrent registrations never overdraw it.
  if (!(await deps.enrollmentTokens.takeUse(tokenHash, now))) throw refused();
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
    tags: enrollment.tags,
    tenantId: enrollment.tenantId,
    environmentId: enrollment.environmentId,
    agentTokenHash: deps.random.hash(agentToken),
    // Registering proves the agent is alive: it is online from the first moment.
    lastHeartbeatAt: now.toISOString(),
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
  };
  await deps.targets.create(target);
  return { target_id: id, short_id: shortId, agent_token: agentToken, tags: enrollment.tags };
};
