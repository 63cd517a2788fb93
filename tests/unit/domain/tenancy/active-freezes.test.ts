import { describe, expect, it } from 'vitest';
import { activeFreezes, freezeApplies } from '../../../../domain/tenancy/freezes.js';
import type { Freeze } from '../../../../domain/tenancy/types.js';
import {
  aFreeze,
  FakeFreezeRepository,
  FakeEnvironmentRepository,
  FakeTenantRepository,
} from '../../../fakes/tenancy.js';

const TENANT = 'aaaaaaaa-0000-4000-8000-000000000000';
const OTHER_TENANT = 'bbbbbbbb-0000-4000-8000-000000000000';
const SOLUTION = '5050a000-0000-4000-8000-000000000000';
const ENVIRONMENT = 'e0e0e000-0000-4000-8000-000000000000';

const START = '2026-12-01T00:00:00.000Z';
const END = '2026-12-02T00:00:00.000Z';
const INSIDE = new Date('2026-12-01T12:00:00.000Z');

const deployment = { tenantId: TENANT, solutionId: SOLUTION, environmentId: ENVIRONMENT };

const repositoryWith = (...freezes: Freeze[]) => {
  const tenants = new FakeTenantRepository();
  const repository = new FakeFreezeRepository(tenants, new FakeEnvironmentRepository(tenants));
  for (const freeze of freezes) repository.freezes.set(freeze.id, freeze);
  return repository;
};

describe('freezeApplies: the window', () => {
  const freeze = aFreeze({ startTime: START, endTime: END });

  it('holds from start_time inclusive', () => {
    expect(freezeApplies(freeze, deployment, new Date(START))).toBe(true);
  });

  it('does not hold one millisecond before start_time', () => {
    expect(freezeApplies(freeze, deployment, new Date(Date.parse(START) - 1))).toBe(false);
  });

  it('holds until one millisecond before end_time', () => {
    expect(freezeApplies(freeze, deployment, new Date(Date.parse(END) - 1))).toBe(true);
  });

  it('no longer holds at end_time (exclusive)', () => {
    expect(freezeApplies(freeze, deployment, new Date(END))).toBe(false);
  });
});

describe('freezeApplies: the scope', () => {
  it('a global freeze matches every deployment, even one without tenant, solution or environment', () => {
    const freeze = aFreeze();
    expect(freezeApplies(freeze, deployment, INSIDE)).toBe(true);
    expect(freezeApplies(freeze, { tenantId: null, solutionId: null, environmentId: null }, INSIDE)).toBe(true);
  });

  it.each([
    ['tenantId', TENANT, OTHER_TENANT],
    ['solutionId', SOLUTION, '5050b000-0000-4000-8000-000000000000'],
    ['environmentId', ENVIRONMENT, 'e0e0f000-0000-4000-8000-000000000000'],
  ] as const)('a freeze on %s matches that value only', (field, value, other) => {
    const freeze = aFreeze({ [field]: value });
    expect(freezeApplies(freeze, { ...deployment, [field]: value }, INSIDE)).toBe(true);
    expect(freezeApplies(freeze, { ...deployment, [field]: other }, INSIDE)).toBe(false);
  });

  it.each(['tenantId', 'solutionId', 'environmentId'] as const)(
    'a freeze on %s does not match a deployment without one',
    (field) => {
      const freeze = aFreeze({ [field]: deployment[field] });
      expect(freezeApplies(freeze, { ...deployment, [field]: null }, INSIDE)).toBe(false);
    },
  );

  it('a freeze on several fields needs every one of them to match', () => {
    const freeze = aFreeze({ tenantId: TENANT, environmentId: ENVIRONMENT });
    expect(freezeApplies(freeze, deployment, INSIDE)).toBe(true);
    expect(
      freezeApplies(freeze, { ...deployment, environmentId: 'e0e0f000-0000-4000-8000-000000000000' }, INSIDE),
    ).toBe(false);
    expect(freezeApplies(freeze, { ...deployment, tenantId: OTHER_TENANT }, INSIDE)).toBe(false);
  });

  it('compares ids without regard to case', () => {
    const freeze = aFreeze({ environmentId: ENVIRONMENT.toUpperCase() });
    expect(freezeApplies(freeze, deployment, INSIDE)).toBe(true);
  });
});

describe('activeFreezes', () => {
  it('answers the freezes that stop this deployment now, the one ending last first', async () => {
    const global = aFreeze({ id: 'global', endTime: '2026-12-01T18:00:00.000Z' });
    const scoped = aFreeze({
      id: 'scoped',
      tenantId: TENANT,
      environmentId: ENVIRONMENT,
      endTime: '2026-12-03T00:00:00.000Z',
    });
    const otherTenant = aFreeze({ id: 'other', tenantId: OTHER_TENANT });
    const future = aFreeze({
      id: 'future',
      startTime: '2026-12-05T00:00:00.000Z',
      endTime: '2026-12-06T00:00:00.000Z',
    });
    const past = aFreeze({ id: 'past', startTime: '2026-11-01T00:00:00.000Z', endTime: '2026-11-02T00:00:00.000Z' });
    const freezes = repositoryWith(global, scoped, otherTenant, future, past);

    const found = await activeFreezes({ freezes }, { ...deployment, at: INSIDE });

    expect(found.map((f) => f.id)).toEqual(['scoped', 'global']);
  });

  it('answers nothing when no freeze is in force', async () => {
    const freezes = repositoryWith(aFreeze({ startTime: START, endTime: END }));

    const found = await activeFreezes({ freezes }, { ...deployment, at: new Date(END) });

    expect(found).toEqual([]);
  });

  it('applies the exact window even when the repository answers a wider set', async () => {
    const notStarted = aFreeze({ id: 'not-started', startTime: '2026-12-01T12:00:00.001Z', endTime: END });
    const freezes = { listEndingAfter: async () => [notStarted] };

    expect(await activeFreezes({ freezes }, { ...deployment, at: INSIDE })).toEqual([]);
  });
});
