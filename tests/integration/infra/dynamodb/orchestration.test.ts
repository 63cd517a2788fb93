// The orchestration instances, pending requests and the dispatcher against DynamoDB Local: the capacity holds under
// concurrency, freed instances go to the highest-priority oldest request, and nothing is dispatched twice.
import { randomUUID } from 'node:crypto';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { dispatchPending, type DispatchDeps } from '../../../../domain/deployments/dispatch.js';
import { startOrQueue } from '../../../../domain/deployments/start.js';
import type { Deployment } from '../../../../domain/deployments/types.js';
import { DynamoDeploymentRepository } from '../../../../infra/dynamodb/deployment-repository.js';
import { DynamoIdGenerator } from '../../../../infra/dynamodb/id-generator.js';
import { DynamoOrchestration } from '../../../../infra/dynamodb/orchestration.js';
import { DynamoPendingRequestRepository } from '../../../../infra/dynamodb/pending-request-repository.js';
import { FakeDispatchQueue, aDraft } from '../../../fakes/deployments.js';
import { createServiceTable, dynamoClient, uniqueName } from '../../../support/aws.js';

const client = dynamoClient();
const db = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });

/** One table per test: each starts from an empty queue and free instances. */
const setup = async (capacity: number) => {
  const table = uniqueName('orch');
  await createServiceTable(client, table);
  const orchestration = new DynamoOrchestration(db, table, capacity);
  const pending = new DynamoPendingRequestRepository(db, table);
  const deployments = new DynamoDeploymentRepository(db, table);
  const dispatch = new FakeDispatchQueue();
  const deps: DispatchDeps = {
    orchestration,
    pending,
    dispatch,
    ids: new DynamoIdGenerator(db, table, { alphabet: 'abcdefghijklmnopqrstuvwxyz0123456789', minLength: 4 }),
    uuids: { uuid: () => randomUUID() },
    clock: { now: () => new Date() },
    settings: { maxRetries: 2 },
  };
  /** Ends a running deployment the way cancel does: terminal state and instance freed in one transaction. */
  const finish = async (deployment: Deployment) =>
    orchestration.finish(deployment, {
      ...deployment,
      state: 'success',
      completedAt: new Date().toISOString(),
      revision: deployment.revision + 1,
    });
  return { deps, orchestration, pending, deployments, dispatch, finish, table };
};

describe('orchestration capacity', () => {
  it('starts exactly one of 20 concurrent creates with one instance and queues 19', async () => {
    // Prepare
    const { deps, deployments, pending } = await setup(1);
    // Act
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => startOrQueue(deps, aDraft({ triggeredBy: `user-${i}` }))),
    );
    // Assess
    expect(outcomes.filter((o) => o.kind === 'started')).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'queued')).toHaveLength(19);
    expect((await deployments.listAll()).map((d) => d.instanceId)).toEqual(['instance-1']);
    expect((await pending.queue(100)).length).toBe(19);
    // each one's place, counted (a COUNT query), is its place in the dispatch order
    const queue = await pending.queue(100);
    expect(await Promise.all(queue.map((r) => pending.position(r)))).toEqual(queue.map((_, i) => i + 1));
  });

  it('an answer lost after the start committed, read back once the deployment ended: started, holding no instance', async () => {
    // Prepare: a client whose start transaction applies, then the deployment ends, then the answer is lost
    const { deps, deployments, pending, finish, table } = await setup(1);
    const lossy = Object.create(db) as DynamoDBDocumentClient;
    lossy.send = (async (command: unknown) => {
      const answer = await db.send(command as TransactWriteCommand);
      if (command instanceof TransactWriteCommand) {
        await finish((await deployments.listAll())[0]!);
        throw Object.assign(new Error('socket hang up after the write'), { name: 'TimeoutError' });
      }
      return answer;
    }) as DynamoDBDocumentClient['send'];
    const orchestration = new DynamoOrchestration(lossy, table, 1);
    // Act
    const outcome = await startOrQueue({ ...deps, orchestration }, aDraft());
    // Assess: the deployment it stored, ended, on no instance (not the one it tried); nothing queued
    expect(outcome.kind).toBe('started');
    expect(outcome.kind === 'started' ? outcome.deployment.instanceId : 'queued').toBeNull();
    expect((await deployments.listAll()).map((d) => [d.state, d.instanceId])).toEqual([['success', null]]);
    expect(await pending.queue(10)).toEqual([]);
  });

  it('hands each freed instance to the highest-priority, oldest request, once, across duplicate wake-ups', async () => {
    // Prepare: capacity 1, one running, then three waiting with priorities 0, 50, 0
    const { deps, deployments, pending, finish } = await setup(1);
    const first = await startOrQueue(deps, aDraft());
    expect(first.kind).toBe('started');
    const queued = [];
    for (const priority of [0, 50, 0]) {
      const outcome = await startOrQueue(deps, aDraft({ config: { ...aDraft().config, priority } }));
      if (outcome.kind !== 'queued') throw new Error('expected queued');
      queued.push(outcome.request);
      await new Promise((resolve) => setTimeout(resolve, 5)); // distinct queued_at
    }
    expect(await dispatchPending(deps)).toEqual({ dispatched: [], failed: [] }); // nothing free yet

    // Act + Assess: release one at a time; two concurrent dispatchers per release (a duplicate delivery)
    const order: string[] = [];
    let running = first.kind === 'started' ? first.deployment : undefined;
    for (let round = 0; round < 3; round += 1) {
      expect(await finish((await deployments.get(running!.id))!)).toBe(true);
      const reports = await Promise.all([dispatchPending(deps), dispatchPending(deps)]);
      const dispatched = reports.flatMap((r) => r.dispatched);
      expect(dispatched).toHaveLength(1);
      order.push(dispatched[0]!.requestId);
      running = await deployments.get(dispatched[0]!.deploymentId);
      expect(running?.instanceId).toBe('instance-1');
    }
    expect(order).toEqual([queued[1]!.id, queued[0]!.id, queued[2]!.id]);
    const all = await pending.listAll();
    expect(all.map((r) => r.status)).toEqual(['dispatched', 'dispatched', 'dispatched']);
    expect(
      all.every((r) => r.deploymentId !== null && r.dispatchedToInstanceId === 'instance-1' && r.dispatchedAt !== null),
    ).toBe(true);
  });

  it('lets a higher-priority create overtake the queue, and a cancelled request is never dispatched', async () => {
    const { deps, pending, deployments, finish } = await setup(1);
    const running = await startOrQueue(deps, aDraft());
    const low = await startOrQueue(deps, aDraft());
    const cancelled = await startOrQueue(deps, aDraft({ config: { ...aDraft().config, priority: 10 } }));
    if (low.kind !== 'queued' || cancelled.kind !== 'queued' || running.kind !== 'started')
      throw new Error('unexpected');
    expect(await pending.cancel(cancelled.request, new Date())).toBe(true);
    expect(await pending.cancel(cancelled.request, new Date())).toBe(false);
    await finish(running.deployment);
    // A hotfix (priority 90) created while the low one waits starts at once: the instance is free and it outranks the queue.
    const hotfix = await startOrQueue(deps, aDraft({ config: { ...aDraft().config, priority: 90 } }));
    expect(hotfix.kind).toBe('started');
    // An equal-priority create does not overtake the waiting one.
    expect((await startOrQueue(deps, aDraft())).kind).toBe('queued');
    expect((await pending.get(cancelled.request.id))?.status).toBe('cancelled');
    expect((await deployments.listAll()).length).toBe(2);
  });

  it('raising the capacity lets the dispatcher start more at once; lowering it stops new starts above it', async () => {
    const { deps, orchestration } = await setup(0);
    for (let i = 0; i < 3; i += 1) expect((await startOrQueue(deps, aDraft())).kind).toBe('queued');
    await orchestration.setCapacity(2);
    expect((await dispatchPending(deps)).dispatched.map((d) => d.instanceId).sort()).toEqual([
      'instance-1',
      'instance-2',
    ]);
    await orchestration.setCapacity(0);
    expect((await orchestration.holders()).size).toBe(2);
    expect((await startOrQueue(deps, aDraft({ config: { ...aDraft().config, priority: 100 } }))).kind).toBe('queued');
  });
});
