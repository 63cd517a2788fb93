// A keyed create's claim on its Idempotency-Key against DynamoDB Local: stored in the same transaction as the
// deployment it starts or the request it queues, refused (nothing stored) while another create holds it, free again
// once it expired, and an answer lost after the commit still reads as committed.
import { randomUUID } from 'node:crypto';
import { DynamoDBDocumentClient, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { CreateClaimedError, startOrQueue, type StartDeps } from '../../../../domain/deployments/start.js';
import type { CreateClaim } from '../../../../domain/deployments/types.js';
import { DynamoCreateClaims } from '../../../../infra/dynamodb/create-claims.js';
import { DynamoDeploymentRepository } from '../../../../infra/dynamodb/deployment-repository.js';
import { DynamoIdGenerator } from '../../../../infra/dynamodb/id-generator.js';
import { DynamoOrchestration } from '../../../../infra/dynamodb/orchestration.js';
import { DynamoPendingRequestRepository } from '../../../../infra/dynamodb/pending-request-repository.js';
import { FakeDispatchQueue, aDraft } from '../../../fakes/deployments.js';
import { createServiceTable, dynamoClient, uniqueName } from '../../../support/aws.js';

const client = dynamoClient();
const db = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
const DAY = 24 * 60 * 60 * 1000;

/** A client whose writes (puts and transactions) apply, then lose their answer as a timeout. */
const lossy = (): DynamoDBDocumentClient => {
  const client = Object.create(db) as DynamoDBDocumentClient;
  client.send = (async (command: unknown) => {
    const answer = await db.send(command as PutCommand);
    if (command instanceof TransactWriteCommand || command instanceof PutCommand)
      throw Object.assign(new Error('socket hang up after the write'), { name: 'TimeoutError' });
    return answer;
  }) as DynamoDBDocumentClient['send'];
  return client;
};

const setup = async (capacity: number, writer: DynamoDBDocumentClient = db) => {
  const table = uniqueName('claims');
  await createServiceTable(client, table);
  const deps: StartDeps = {
    orchestration: new DynamoOrchestration(writer, table, capacity),
    pending: new DynamoPendingRequestRepository(writer, table),
    dispatch: new FakeDispatchQueue(),
    ids: new DynamoIdGenerator(db, table, { alphabet: 'abcdefghijklmnopqrstuvwxyz0123456789', minLength: 4 }),
    uuids: { uuid: () => randomUUID() },
    clock: { now: () => new Date() },
  };
  return {
    deps,
    claims: new DynamoCreateClaims(db, table),
    deployments: new DynamoDeploymentRepository(db, table),
    pending: new DynamoPendingRequestRepository(db, table),
    table,
  };
};

const aClaim = (scope = randomUUID(), at = new Date()): CreateClaim => ({
  scope,
  fingerprint: 'request-hash',
  key: 'key-1',
  at,
  until: new Date(at.getTime() + DAY),
});

describe('a keyed create claims its key with what it makes', () => {
  it('a started deployment: the claim names it; a second create with the key stores nothing', async () => {
    // Prepare
    const { deps, claims, deployments } = await setup(2);
    const claim = aClaim();
    // Act
    const first = await startOrQueue(deps, aDraft(), claim);
    const second = await startOrQueue(deps, aDraft(), { ...claim, at: new Date() }).catch((e: unknown) => e);
    // Assess
    if (first.kind !== 'started') throw new Error('expected started');
    expect(await claims.get(claim.scope, new Date())).toEqual({
      kind: 'deployment',
      id: first.deployment.id,
      fingerprint: 'request-hash',
    });
    expect(second).toBeInstanceOf(CreateClaimedError);
    expect((await deployments.listAll()).map((d) => d.id)).toEqual([first.deployment.id]);
  });

  it('a queued request: the claim names it; a retry that could start now, or queue again, stores nothing', async () => {
    // Prepare: no instance
    const { deps, claims, deployments, pending, table } = await setup(0);
    const claim = aClaim();
    // Act
    const first = await startOrQueue(deps, aDraft(), claim);
    const queuedAgain = await startOrQueue(deps, aDraft(), claim).catch((e: unknown) => e);
    // an instance free and a higher priority: this one would start at once
    const hotfix = aDraft({ config: { ...aDraft().config, priority: 90 } });
    const started = await startOrQueue(
      { ...deps, orchestration: new DynamoOrchestration(db, table, 1) },
      hotfix,
      claim,
    ).catch((e: unknown) => e);
    // Assess
    if (first.kind !== 'queued') throw new Error('expected queued');
    expect(await claims.get(claim.scope, new Date())).toMatchObject({ kind: 'request', id: first.request.id });
    expect(queuedAgain).toBeInstanceOf(CreateClaimedError);
    expect(started).toBeInstanceOf(CreateClaimedError);
    expect((await pending.listAll()).map((r) => r.id)).toEqual([first.request.id]);
    expect(await deployments.listAll()).toEqual([]);
  });

  it('an expired claim holds nothing: the key names a new create', async () => {
    // Prepare: a claim made two days ago
    const { deps, claims, deployments } = await setup(2);
    const old = aClaim(randomUUID(), new Date(Date.now() - 2 * DAY));
    const before = await startOrQueue(deps, aDraft(), old);
    // Act
    const now = await startOrQueue(deps, aDraft(), { ...old, at: new Date(), until: new Date(Date.now() + DAY) });
    // Assess
    if (before.kind !== 'started' || now.kind !== 'started') throw new Error('expected started');
    expect(await claims.get(old.scope, new Date())).toMatchObject({ id: now.deployment.id });
    expect(await deployments.listAll()).toHaveLength(2);
  });

  it('a write that applied and lost its answer is committed, claim and all', async () => {
    // Prepare: every write's answer lost after it applied (the SDK's retry meets the first attempt's items)
    const started = await setup(2, lossy());
    const queued = await setup(0, lossy());
    const claim = aClaim();
    // Act
    const a = await startOrQueue(started.deps, aDraft(), claim);
    const b = await startOrQueue(queued.deps, aDraft(), claim);
    // Assess
    if (a.kind !== 'started' || b.kind !== 'queued') throw new Error('expected started, then queued');
    expect(await started.claims.get(claim.scope, new Date())).toMatchObject({ id: a.deployment.id });
    expect(await queued.claims.get(claim.scope, new Date())).toMatchObject({ id: b.request.id });
    expect(await queued.pending.listAll()).toHaveLength(1);
  });
});
