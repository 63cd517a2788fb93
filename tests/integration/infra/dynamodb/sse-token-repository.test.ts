import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoSseTokenRepository } from '../../../../infra/dynamodb/sse-token-repository.js';
import { createTestTable, dynamoClient, uniqueName } from '../../../support/aws.js';

const table = uniqueName('sse');
const client = dynamoClient();
const repository = new DynamoSseTokenRepository(DynamoDBDocumentClient.from(client), table);
const grant = { kind: 'user' as const, userId: 'u1', apiKeyId: null, sessionId: 's1', sessionStartedAt: 1 };
const inAMinute = () => new Date(Date.now() + 60_000);

beforeAll(async () => {
  await createTestTable(client, table);
});

describe('DynamoSseTokenRepository', () => {
  it('lets exactly one of 20 concurrent consumers have a token', async () => {
    // Prepare
    await repository.putToken('race', grant, inAMinute());
    // Act
    const results = await Promise.all(Array.from({ length: 20 }, () => repository.consumeToken('race', new Date())));
    // Assess
    expect(results.filter((r) => r !== undefined)).toEqual([grant]);
  });

  it('does not hand out an expired token', async () => {
    await repository.putToken('old', grant, new Date(Date.now() + 1_000));
    expect(await repository.consumeToken('old', new Date(Date.now() + 2_000))).toBeUndefined();
  });

  it('rotates a session refresh hash once, and not after the session ends', async () => {
    await repository.putSession({ ...grant, sessionId: 'rot' }, 'h1', inAMinute());
    const concurrent = await Promise.all([
      repository.rotateSession('rot', 'h1', 'h2a', new Date()),
      repository.rotateSession('rot', 'h1', 'h2b', new Date()),
    ]);
    expect(concurrent.filter((r) => r !== undefined)).toHaveLength(1);
    const winner = concurrent[0] === undefined ? 'h2b' : 'h2a';
    expect(await repository.rotateSession('rot', winner, 'h3', new Date(Date.now() + 120_000))).toBeUndefined();
    expect(await repository.rotateSession('rot', winner, 'h3', new Date())).toMatchObject({
      sessionId: 'rot',
      userId: 'u1',
    });
  });

  it('ends a session for good, answering its grant: it exists no more and never rotates again (ending twice is harmless)', async () => {
    await repository.putSession({ ...grant, sessionId: 'end' }, 'h1', inAMinute());
    expect(await repository.sessionExists('end')).toBe(true);
    const ended = await repository.endSession('end');
    const again = await repository.endSession('end');
    expect(ended).toMatchObject({ sessionId: 'end', userId: grant.userId });
    expect(again).toBeUndefined();
    expect(await repository.sessionExists('end')).toBe(false);
    expect(await repository.rotateSession('end', 'h1', 'h2', new Date())).toBeUndefined();
  });
});
