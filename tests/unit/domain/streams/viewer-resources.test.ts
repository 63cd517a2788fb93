import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../../domain/errors.js';
import { InsufficientPermissionsError } from '../../../../domain/identity/errors.js';
import { resourceSources } from '../../../../domain/streams/resource-sources.js';
import { openResourceTopic, type ViewerResourceDeps } from '../../../../domain/streams/viewer-resources.js';
import type { Target } from '../../../../domain/targets/types.js';
import { FakeClock } from '../../../fakes/clock.js';
import { FakeDeploymentRepository, FakePendingRequestRepository } from '../../../fakes/deployments.js';
import { FakeTargetRepository } from '../../../fakes/targets.js';
import { aViewer } from '../../../fakes/viewers.js';

const aTarget = (id: string, tenantId: string | null): Target => ({
  id,
  shortId: id,
  name: `web-${id}`,
  hostname: `${id}.local`,
  os: 'linux',
  arch: 'x64',
  agentVersion: '1.0.0',
  tags: [],
  tenantId,
  environmentId: null,
  agentTokenHash: `hash-${id}`,
  lastHeartbeatAt: null,
  createdAt: `2026-01-01T00:00:0${id.length}.000Z`,
  updatedAt: '2026-01-01T00:00:00.000Z',
});

const setup = async () => {
  const targets = new FakeTargetRepository();
  await targets.create(aTarget('a', 't1'));
  await targets.create(aTarget('b', 't2'));
  const deps: ViewerResourceDeps = {
    lists: {
      deployments: new FakeDeploymentRepository(),
      pending: new FakePendingRequestRepository(),
      targets,
      clock: new FakeClock(),
    },
    sources: resourceSources({ server: '1.0.0', agentRelease: () => null }),
  };
  return deps;
};

const reader = (tenantId: string | null) => aViewer({ tenantId, permissions: ['targets:read'] });

describe('openResourceTopic', () => {
  it("gives a tenant's caller its tenant's list, whatever tenant_id it names, and that list's snapshot", async () => {
    // Prepare
    const deps = await setup();
    // Act
    const opened = await openResourceTopic(deps, reader('t1'), {
      resourceType: 'targets',
      tenantId: 't2',
      snapshot: true,
    });
    // Assess
    expect(opened.topic).toEqual({ kind: 'resources', resourceType: 'targets', tenantId: 't1' });
    expect(opened.snapshot).toMatchObject([
      { type: 'changes', resource_type: 'targets', changes: [{ event: 'created', data: { id: 'a' } }] },
    ]);
  });

  it('gives a global caller every tenant, or the one it names', async () => {
    // Prepare
    const deps = await setup();
    // Act
    const all = await openResourceTopic(deps, reader(null), {
      resourceType: 'targets',
      tenantId: undefined,
      snapshot: true,
    });
    const one = await openResourceTopic(deps, reader(null), {
      resourceType: 'targets',
      tenantId: 't2',
      snapshot: false,
    });
    // Assess
    expect(all.topic).toEqual({ kind: 'resources', resourceType: 'targets', tenantId: null });
    expect(all.snapshot.flatMap((m) => (m.type === 'changes' ? m.changes : []))).toHaveLength(2);
    expect(one).toEqual({ topic: { kind: 'resources', resourceType: 'targets', tenantId: 't2' }, snapshot: [] });
  });

  it("refuses a list without the resource's permission, and an unknown resource", async () => {
    // Prepare
    const deps = await setup();
    const request = { tenantId: undefined, snapshot: false };
    // Act / Assess
    await expect(openResourceTopic(deps, reader(null), { ...request, resourceType: 'deployments' })).rejects.toThrow(
      InsufficientPermissionsError,
    );
    await expect(openResourceTopic(deps, reader(null), { ...request, resourceType: 'users' })).rejects.toThrow(
      ValidationError,
    );
  });
});
