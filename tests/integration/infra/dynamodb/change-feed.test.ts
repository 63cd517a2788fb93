// The change feed (gsi3) against DynamoDB Local: every write of a deployment, pending request or target moves the
// record's one entry to the write's time, with its tenant; a deleted target leaves a tombstone; a look from a time
// lists only what was written since.
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChangedRecord } from '../../../../domain/shared/ports.js';
import type { Target } from '../../../../domain/targets/types.js';
import { DynamoChangeFeed } from '../../../../infra/dynamodb/change-feed.js';
import { deploymentItem, DynamoDeploymentRepository } from '../../../../infra/dynamodb/deployment-repository.js';
import { DynamoPendingRequestRepository } from '../../../../infra/dynamodb/pending-request-repository.js';
import { DynamoTargetRepository } from '../../../../infra/dynamodb/target-repository.js';
import { aDeployment, aPendingRequest } from '../../../fakes/deployments.js';
import { createServiceTable, serviceTableFixture } from '../../../support/aws.js';

const { table, client, db } = serviceTableFixture('changes');
const feed = new DynamoChangeFeed(db, table);
const targets = new DynamoTargetRepository(db, table);
const deployments = new DynamoDeploymentRepository(db, table);
const pending = new DynamoPendingRequestRepository(db, table);

const aTarget = (id: string): Target => ({
  id,
  shortId: `s-${id}`,
  name: id,
  hostname: `${id}.local`,
  os: 'linux',
  arch: 'x64',
  agentVersion: '1.0.0',
  tags: [],
  tenantId: null,
  environmentId: null,
  agentTokenHash: `hash-${id}`,
  lastHeartbeatAt: null,
  createdAt: '2026-11-25T10:00:00.000Z',
  updatedAt: '2026-11-25T10:00:00.000Z',
});

/** The feed is a GSI (eventually consistent): looks again for up to 2 s until `done` holds. */
const eventually = async (
  look: () => Promise<readonly ChangedRecord[]>,
  done: (entries: readonly ChangedRecord[]) => boolean,
): Promise<readonly ChangedRecord[]> => {
  let entries = await look();
  for (let i = 0; i < 20 && !done(entries); i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    entries = await look();
  }
  return entries;
};

beforeAll(async () => {
  await createServiceTable(client, table);
});

describe('DynamoChangeFeed', () => {
  it('lists each target once at its last write (create, heartbeat, connect, disconnect) and a deleted one by its tombstone', async () => {
    // Prepare
    const before = new Date(Date.now() - 1000).toISOString();
    await targets.create(aTarget('t-a'));
    await targets.create(aTarget('t-b'));
    // Act
    await targets.recordHeartbeat('t-a', new Date());
    await targets.connect('t-a', 'conn-1', new Date());
    const middle = new Date().toISOString();
    await targets.disconnect('t-a', 'conn-1', new Date());
    await targets.delete((await targets.get('t-b'))!);
    // Assess
    const all = await eventually(
      () => feed.since('targets', before),
      (e) => e.filter((x) => x.id.startsWith('t-')).length === 2,
    );
    const ids = all.map((e) => e.id).filter((id) => id.startsWith('t-'));
    expect(ids.sort()).toEqual(['t-a', 't-b']); // t-b: its record's entry went with it, the tombstone's remains
    const later = await feed.since('targets', middle);
    expect(later.map((e) => e.id).sort()).toEqual(['t-a', 't-b']);
    expect(later.every((e) => e.at >= middle && e.tenantId === null)).toBe(true);
  });

  it('lists deployments and pending requests by their last write, with the tenant, and nothing older than asked', async () => {
    // Prepare
    const tenant = 'a0000000-0000-4000-8000-00000000000a';
    const old = aDeployment({ id: 'd-old', shortId: 'd-old', tenantId: tenant });
    await db.send(new PutCommand({ TableName: table, Item: deploymentItem(old) }));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const from = new Date().toISOString();
    const fresh = aDeployment({ id: 'd-new', shortId: 'd-new', tenantId: tenant });
    await db.send(new PutCommand({ TableName: table, Item: deploymentItem(fresh) }));
    // Act
    await deployments.update(fresh, { ...fresh, state: 'success', revision: fresh.revision + 1 });
    const request = aPendingRequest({ id: 'p-1' });
    await pending.create(request);
    await pending.cancel(request, new Date());
    // Assess
    const changed = await eventually(
      () => feed.since('deployments', from),
      (e) => e.length >= 1,
    );
    expect(changed).toEqual([{ id: 'd-new', at: expect.any(String), tenantId: tenant }]);
    const requests = await eventually(
      () => feed.since('pending_deployments', from),
      (e) => e.length >= 1,
    );
    expect(requests.map((e) => e.id)).toEqual(['p-1']);
    expect((await pending.get('p-1'))?.status).toBe('cancelled');
  });
});
