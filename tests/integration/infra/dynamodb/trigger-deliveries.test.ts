// Replay keys of trigger calls (DynamoTriggerRepository.claimDelivery): a key is refused while its window lasts, and a
// claim past its window counts as gone although DynamoDB has not deleted it yet (its TTL deletes late), so the window
// README and docs/security.md state is exact.
import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../../../../infra/dynamodb/keys.js';
import { DynamoTriggerRepository } from '../../../../infra/dynamodb/trigger-repository.js';
import { createServiceTable, serviceTableFixture } from '../../../support/aws.js';

const { table, client, db } = serviceTableFixture('trigger-deliveries');
const triggers = new DynamoTriggerRepository(db, table);

beforeAll(async () => {
  await createServiceTable(client, table);
});

describe('DynamoTriggerRepository.claimDelivery', () => {
  it('refuses a key within its window, and takes it again once the window has passed', async () => {
    // Prepare
    const trigger = randomUUID();
    const digest = `github-sha256:${'ab'.repeat(32)}`;
    // Act
    const first = await triggers.claimDelivery(trigger, digest, 3600);
    const replay = await triggers.claimDelivery(trigger, digest, 3600);
    const otherTrigger = await triggers.claimDelivery(randomUUID(), digest, 3600);
    const expired = await triggers.claimDelivery(trigger, 'github-sha256:expired', 0);
    const stillStored = await db.send(
      new GetCommand({ TableName: table, Key: keys.triggerDelivery(trigger, 'github-sha256:expired') }),
    );
    const afterWindow = await triggers.claimDelivery(trigger, 'github-sha256:expired', 3600);
    const replayAfterRetake = await triggers.claimDelivery(trigger, 'github-sha256:expired', 3600);
    // Assess
    expect([first, replay, otherTrigger]).toEqual([true, false, true]);
    expect(expired).toBe(true);
    expect(stillStored.Item).toBeDefined();
    expect([afterWindow, replayAfterRetake]).toEqual([true, false]);
  });
});
