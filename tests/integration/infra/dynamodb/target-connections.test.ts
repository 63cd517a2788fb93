// The agents' WebSocket connections on the target record, against DynamoDB Local: a new connection replaces the
// old one (answered, so it can be closed), a disconnect clears only the current connection, and a connection for a
// target that no longer exists is refused and leaves no lookup behind.
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Target } from '../../../../domain/targets/types.js';
import { keys } from '../../../../infra/dynamodb/keys.js';
import { DynamoTargetRepository } from '../../../../infra/dynamodb/target-repository.js';
import { createServiceTable, serviceTableFixture } from '../../../support/aws.js';

const { table, client, db } = serviceTableFixture('connections');
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

const lookup = async (connectionId: string) =>
  (await db.send(new GetCommand({ TableName: table, Key: keys.agentConnection(connectionId), ConsistentRead: true })))
    .Item;

beforeAll(async () => {
  await createServiceTable(client, table);
});

describe('DynamoTargetRepository connections', () => {
  it('stores a connection with a heartbeat, and a newer one replaces it', async () => {
    // Arrange
    const target = await aTarget();
    const at = new Date('2026-11-24T10:01:00.000Z');
    // Act
    const first = await targets.connect(target.id, 'conn-a', at);
    const second = await targets.connect(target.id, 'conn-b', new Date('2026-11-24T10:02:00.000Z'));
    const stored = await targets.get(target.id);
    // Assess
    expect(first).toEqual({ replaced: null });
    expect(second).toEqual({ replaced: 'conn-a' });
    expect(stored).toMatchObject({
      connectionId: 'conn-b',
      connectedAt: '2026-11-24T10:02:00.000Z',
      lastHeartbeatAt: '2026-11-24T10:02:00.000Z',
    });
    expect(await targets.connectionTarget('conn-a')).toBe(target.id);
    expect(await targets.connectionTarget('conn-b')).toBe(target.id);
    expect((await lookup('conn-b'))?.['ttl']).toBe(Math.ceil(Date.parse('2026-11-24T10:02:00.000Z') / 1000) + 3 * 3600);
  });

  it('clears only the current connection on a disconnect, and always removes the lookup', async () => {
    // Arrange
    const target = await aTarget();
    await targets.connect(target.id, 'conn-c', new Date());
    await targets.connect(target.id, 'conn-d', new Date());
    // Act
    await targets.disconnect(target.id, 'conn-c', new Date('2026-11-24T11:00:00.000Z'));
    const afterOld = await targets.get(target.id);
    await targets.disconnect(target.id, 'conn-d', new Date('2026-11-24T11:01:00.000Z'));
    const afterCurrent = await targets.get(target.id);
    // Assess
    expect(afterOld?.connectionId).toBe('conn-d');
    expect(afterOld?.disconnectedAt).toBeUndefined();
    expect(afterCurrent?.connectionId).toBeUndefined();
    expect(afterCurrent?.disconnectedAt).toBe('2026-11-24T11:01:00.000Z');
    expect(await targets.connectionTarget('conn-c')).toBeUndefined();
    expect(await targets.connectionTarget('conn-d')).toBeUndefined();
  });

  it('refuses a connection for a deleted target and leaves no lookup; a disconnect after the delete is harmless', async () => {
    // Arrange
    const target = await aTarget();
    await targets.connect(target.id, 'conn-e', new Date());
    await targets.delete(target);
    // Act
    const refused = await targets.connect(target.id, 'conn-f', new Date());
    await targets.disconnect(target.id, 'conn-e', new Date());
    // Assess
    expect(refused).toBeUndefined();
    expect(await lookup('conn-f')).toBeUndefined();
    expect(await targets.get(target.id)).toBeUndefined();
    expect(await targets.connectionTarget('conn-e')).toBeUndefined();
  });

  it('a heartbeat that names its target is one write, only over the target’s current connection', async () => {
    // Arrange: a target on conn-h2 (conn-h1 replaced), another target, and a deleted one
    const target = await aTarget();
    const other = await aTarget();
    const gone = await aTarget();
    await targets.connect(target.id, 'conn-h1', new Date('2026-11-24T10:01:00.000Z'));
    await targets.connect(target.id, 'conn-h2', new Date('2026-11-24T10:02:00.000Z'));
    await targets.connect(gone.id, 'conn-g', new Date('2026-11-24T10:02:00.000Z'));
    await targets.delete(gone);
    // Act
    const current = await targets.recordConnectionHeartbeat(target.id, 'conn-h2', new Date('2026-11-24T10:03:00.000Z'));
    const older = await targets.recordConnectionHeartbeat(target.id, 'conn-h2', new Date('2026-11-24T10:02:30.000Z'));
    const replaced = await targets.recordConnectionHeartbeat(
      target.id,
      'conn-h1',
      new Date('2026-11-24T10:04:00.000Z'),
    );
    const foreign = await targets.recordConnectionHeartbeat(other.id, 'conn-h2', new Date('2026-11-24T10:04:00.000Z'));
    const deleted = await targets.recordConnectionHeartbeat(gone.id, 'conn-g', new Date('2026-11-24T10:04:00.000Z'));
    // Assess: the current connection's beat stored (an older one leaves it), the others refused and write nothing
    expect([current, older, replaced, foreign, deleted]).toEqual([true, true, false, false, false]);
    expect((await targets.get(target.id))?.lastHeartbeatAt).toBe('2026-11-24T10:03:00.000Z');
    expect((await targets.get(other.id))?.lastHeartbeatAt).toBeNull();
    expect(await targets.get(gone.id)).toBeUndefined();
  });
});
