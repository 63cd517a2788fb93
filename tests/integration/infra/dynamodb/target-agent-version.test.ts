// The agent's version on the target record, against DynamoDB Local: stored with a heartbeat or a connection when the
// agent names one (after an upgrade), left alone when it names none, recorded alone for a refused agent, and never
// bringing a deleted target back.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Target } from '../../../../domain/targets/types.js';
import { DynamoTargetRepository } from '../../../../infra/dynamodb/target-repository.js';
import { createServiceTable, serviceTableFixture } from '../../../support/aws.js';

const { table, client, db } = serviceTableFixture('agent-version');
const targets = new DynamoTargetRepository(db, table);
let n = 0;

const aTarget = async (): Promise<Target> => {
  n += 1;
  const target: Target = {
    id: `t-${n}`,
    shortId: `short${n}`,
    name: `web-${n}`,
    hostname: `web-${n}.local`,
    os: 'linux',
    arch: 'x64',
    agentVersion: '1.0.0',
    tags: [],
    tenantId: null,
    environmentId: null,
    agentTokenHash: `hash-${n}`,
    lastHeartbeatAt: null,
    createdAt: '2026-11-24T10:00:00.000Z',
    updatedAt: '2026-11-24T10:00:00.000Z',
  };
  await targets.create(target);
  return target;
};

beforeAll(async () => {
  await createServiceTable(client, table);
});

describe('DynamoTargetRepository agent version', () => {
  it('stores the version named with a heartbeat, and keeps it on a heartbeat that names none', async () => {
    // Arrange
    const target = await aTarget();
    // Act
    await targets.recordHeartbeat(target.id, new Date('2026-11-24T10:01:00.000Z'), '1.3.0');
    await targets.recordHeartbeat(target.id, new Date('2026-11-24T10:02:00.000Z'));
    // Assess
    expect(await targets.get(target.id)).toMatchObject({
      agentVersion: '1.3.0',
      lastHeartbeatAt: '2026-11-24T10:02:00.000Z',
    });
  });

  it('stores the version named at a connection', async () => {
    const target = await aTarget();
    await targets.connect(target.id, 'conn-version', new Date('2026-11-24T10:01:00.000Z'), null, '1.4.0');
    expect(await targets.get(target.id)).toMatchObject({ agentVersion: '1.4.0', connectionId: 'conn-version' });
  });

  it('records a refused agent’s version alone (no heartbeat), and nothing for a deleted target', async () => {
    // Arrange
    const target = await aTarget();
    const gone = await aTarget();
    await targets.delete(gone);
    // Act
    await targets.recordAgentVersion(target.id, '2.0.0');
    await targets.recordAgentVersion(target.id, '2.0.0'); // the same again: no write, no error
    await targets.recordAgentVersion(gone.id, '2.0.0');
    // Assess
    expect(await targets.get(target.id)).toMatchObject({ agentVersion: '2.0.0', lastHeartbeatAt: null });
    expect(await targets.get(gone.id)).toBeUndefined();
  });
});
