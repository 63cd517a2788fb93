// The world the plan's unit tests resolve in: a catalog, tenants A and B, environments, targets, freezes and a real
// cipher, all in memory; and the helpers the tests read results with.
import { createAction, createVersion } from '../../../../../domain/catalog/actions.js';
import { createSequence } from '../../../../../domain/catalog/sequences.js';
import type { ActionVariable } from '../../../../../domain/catalog/types.js';
import type { PlanDeps } from '../../../../../domain/deployments/plan/command.js';
import { resolveDeployment } from '../../../../../domain/deployments/plan/resolve.js';
import { DomainError, ValidationError } from '../../../../../domain/errors.js';
import type { Caller } from '../../../../../domain/identity/types.js';
import type { Target } from '../../../../../domain/targets/types.js';
import { AesGcmSecretCipher } from '../../../../../infra/crypto/secret-cipher.js';
import { catalogCaller, catalogFakes, TENANT_A, TENANT_B } from '../../../../fakes/catalog.js';
import { FakeClock } from '../../../../fakes/clock.js';
import { FakeTargetRepository } from '../../../../fakes/targets.js';
import { callerWith, tenancyFakes } from '../../../../fakes/tenancy.js';

export const NOW = new Date('2026-11-22T10:00:00.000Z');
export const ENV_GLOBAL = 'e0000000-0000-4000-8000-000000000001';
export const ENV_A = 'e0000000-0000-4000-8000-00000000000a';
export const ENV_A2 = 'e0000000-0000-4000-8000-0000000000a2';
export const ENV_B = 'e0000000-0000-4000-8000-00000000000b';

export const admin = callerWith('admin', null, 'admin-user');
export const operator = callerWith('operator', null, 'operator-user');
export const tenantUser = (tenantId = TENANT_A): Caller =>
  callerWith('operator', tenantId, `user-of-${tenantId.slice(0, 4)}`);

/** A catalog, tenants A and B, environments, targets, freezes and a real cipher, all in memory. */
export const world = () => {
  const catalog = catalogFakes();
  const tenancy = tenancyFakes();
  const stamp = { createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };
  tenancy.tenants.tenants.set(TENANT_A, { id: TENANT_A, shortId: 'tnA', name: 'Tenant A', slug: 'tenant-a', ...stamp });
  tenancy.tenants.tenants.set(TENANT_B, { id: TENANT_B, shortId: 'tnB', name: 'Tenant B', slug: 'tenant-b', ...stamp });
  for (const [id, shortId, name, tenantId] of [
    [ENV_GLOBAL, 'envG', 'staging', null],
    [ENV_A, 'envA', 'prod-a', TENANT_A],
    [ENV_A2, 'envA2', 'test-a', TENANT_A],
    [ENV_B, 'envB', 'prod-b', TENANT_B],
  ] as const) {
    tenancy.environments.environments.set(id, { id, shortId, name, tenantId, ...stamp });
  }
  const targets = new FakeTargetRepository();
  const cipher = new AesGcmSecretCipher({ activeKeyId: 'test', keys: { test: Buffer.alloc(32, 9) } });
  let steps = 0;
  const deps: PlanDeps = {
    actions: catalog.actions,
    sequences: catalog.sequences,
    solutions: catalog.solutions,
    targets,
    tenants: tenancy.tenants,
    environments: tenancy.environments,
    freezes: tenancy.freezes,
    cipher,
    uuids: { uuid: () => `step-${(steps += 1)}` },
    clock: new FakeClock(NOW),
  };

  let targetCount = 0;
  const target = (name: string, overrides: Partial<Target> = {}): Target => {
    targetCount += 1;
    const made: Target = {
      id: `7a000000-0000-4000-8000-${String(targetCount).padStart(12, '0')}`,
      shortId: `tg${targetCount}`,
      name,
      hostname: `${name}.example`,
      os: 'linux',
      arch: 'x64',
      agentVersion: '1.0.0',
      tags: [],
      tenantId: null,
      environmentId: null,
      agentTokenHash: `hash-${targetCount}`,
      lastHeartbeatAt: new Date(NOW.getTime() - 5_000).toISOString(),
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      ...overrides,
    };
    targets.targets.set(made.id, made);
    return made;
  };

  let slugs = 0;
  /** An action with these versions (the first created first), global unless a tenant is given. */
  const action = async (
    name: string,
    versions: readonly (string | { version: string; variables: Partial<ActionVariable>[] })[],
    tenantId: string | null = null,
  ) => {
    slugs += 1;
    const [first, ...rest] = versions.map((v) => (typeof v === 'string' ? { version: v, variables: [] } : v));
    const creator = catalogCaller(tenantId);
    const input = (v: { version: string; variables: Partial<ActionVariable>[] }) => ({
      version: v.version,
      script: `echo ${name} ${v.version}`,
      variables: v.variables as never,
    });
    const made = await createAction(catalog.deps, creator, { slug: `action-${slugs}`, name, version: input(first!) });
    for (const v of rest) await createVersion(catalog.deps, creator, made.id, input(v));
    return made;
  };

  const sequence = async (
    name: string,
    steps: { action_id: string; version_requirement?: string; order?: number }[],
    tenantId: string | null = null,
  ) => createSequence(catalog.deps, catalogCaller(tenantId), { name, version: '2.1.0', steps });

  return { deps, catalog, tenancy, targets, cipher, target, action, sequence };
};

/** The ValidationError (or other domain error) a promise rejects with. */
export const rejection = async (promise: Promise<unknown>): Promise<DomainError> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
};
export const fieldsOf = (error: DomainError) =>
  error instanceof ValidationError ? error.fields.map((f) => f.field) : [];

export const stepsOf = (resolved: Awaited<ReturnType<typeof resolveDeployment>>) =>
  resolved.draft.plan.steps.map((s) => [
    s.targetName,
    s.sequenceName,
    s.sequenceOrder,
    s.actionName,
    s.actionOrder,
    s.actionVersion,
  ]);
