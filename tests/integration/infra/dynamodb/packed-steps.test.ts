// Plans of up to 2,000 steps against DynamoDB Local: a deployment's steps (and a queued draft's) are stored packed in
// one binary attribute, so the largest plan a create accepts fits one item, through every write (the start
// transaction, a pass's update, the finish) and every read (get, getMany, listAll); an item written before, its
// steps as maps, reads as it did.
import { randomUUID } from 'node:crypto';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { MAX_PLAN_STEPS } from '../../../../domain/deployments/create.js';
import type { Deployment, PlanStep } from '../../../../domain/deployments/types.js';
import { DynamoDeploymentRepository } from '../../../../infra/dynamodb/deployment-repository.js';
import { keys } from '../../../../infra/dynamodb/keys.js';
import { DynamoOrchestration } from '../../../../infra/dynamodb/orchestration.js';
import { DynamoPendingRequestRepository } from '../../../../infra/dynamodb/pending-request-repository.js';
import { aDeployment, aDraft, aPendingRequest, aPlan } from '../../../fakes/deployments.js';
import { createServiceTable, dynamoClient, uniqueName } from '../../../support/aws.js';

const client = dynamoClient();
const db = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });

/** The largest plan a create accepts: every step its own target, ids as random as real ones. */
const hugePlan = () => {
  const [step] = aPlan().steps as [PlanStep];
  const steps = Array.from({ length: MAX_PLAN_STEPS }, (_, i): PlanStep => ({
    ...step,
    id: randomUUID(),
    targetId: randomUUID(),
    targetName: `fleet-host-${i}`,
  }));
  return aPlan({ targetCount: steps.length, steps });
};

const setup = async () => {
  const table = uniqueName('packed');
  await createServiceTable(client, table);
  return {
    table,
    deployments: new DynamoDeploymentRepository(db, table),
    orchestration: new DynamoOrchestration(db, table, 2),
    pending: new DynamoPendingRequestRepository(db, table),
  };
};

/** The stored item's size as DynamoDB counts it, roughly: names and values (binary as its bytes). */
const sizeOf = (item: Record<string, unknown>): number =>
  Buffer.byteLength(
    JSON.stringify(item, (_, value: unknown) =>
      value instanceof Uint8Array ? 'x'.repeat(value.length) : (value as unknown),
    ),
  );

describe('plans of up to 2,000 steps', () => {
  it('a deployment of 2,000 steps starts, reads back, takes a pass and finishes in one item well under 400 KB', async () => {
    // Prepare
    const { table, deployments, orchestration } = await setup();
    const deployment = aDeployment({ id: randomUUID(), shortId: `p${Date.now()}`, plan: hugePlan() });
    // Act
    const instance = await orchestration.start(deployment);
    const started = await deployments.get(deployment.id);
    const steps = started!.plan.steps.map((s, i) => (i === 7 ? { ...s, state: 'running' as const } : s));
    const passed: Deployment = { ...started!, plan: { ...started!.plan, steps }, revision: started!.revision + 1 };
    const updated = await deployments.update(started!, passed);
    const finished = await orchestration.finish(passed, { ...passed, state: 'success', revision: passed.revision + 1 });
    // Assess
    expect(instance).toMatch(/^instance-/);
    expect(started).toEqual({ ...deployment, instanceId: instance });
    expect([updated, finished]).toEqual([true, true]);
    const [got] = await deployments.getMany([deployment.id]);
    expect(got?.plan.steps[7]?.state).toBe('running');
    expect(got?.plan.steps).toHaveLength(MAX_PLAN_STEPS);
    expect((await deployments.listAll()).map((d) => d.plan.steps.length)).toEqual([MAX_PLAN_STEPS]);
    const { Item } = await db.send(new GetCommand({ TableName: table, Key: keys.deployment(deployment.id) }));
    expect(Item?.['plan']).not.toHaveProperty('steps');
    expect(sizeOf(Item!)).toBeLessThan(200_000);
  });

  it('a queued draft of 2,000 steps is stored and read back whole', async () => {
    // Prepare
    const { pending } = await setup();
    const draft = aDraft({ plan: hugePlan() });
    const request = aPendingRequest({ id: randomUUID(), draft });
    // Act
    await pending.create(request);
    // Assess
    expect(await pending.get(request.id)).toEqual(request);
    expect((await pending.queue(10)).map((r) => r.draft.plan.steps.length)).toEqual([MAX_PLAN_STEPS]);
  });

  it('a deployment item written before, its steps as maps, reads as it did', async () => {
    // Prepare
    const { table, deployments } = await setup();
    const old = aDeployment({ id: randomUUID() });
    await db.send(
      new PutCommand({ TableName: table, Item: { ...keys.deployment(old.id), type: 'deployment', ...old } }),
    );
    // Act
    const read = await deployments.get(old.id);
    // Assess
    expect(read).toEqual(old);
  });
});
