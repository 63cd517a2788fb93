// Side effects of a final state are never lost, against DynamoDB Local: a cancel whose process "dies" right after
// the terminal transaction (the side-effect step throws) leaves an outbox entry; the sweep then delivers the cancel
// notice to the agent's inbox and wakes the dispatcher, which dispatches the request that was waiting behind it.
// Also: log events keyed by (command, seq) are appended once, and a retry adds exactly what is missing.
import { randomUUID } from 'node:crypto';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { cancelDeployment } from '../../../../domain/deployments/cancel.js';
import { commandIdOf } from '../../../../domain/deployments/engine.js';
import { owedBy } from '../../../../domain/deployments/outbox.js';
import { dispatchPending, type DispatchDeps } from '../../../../domain/deployments/dispatch.js';
import type { NewEvent } from '../../../../domain/deployments/events.js';
import { startOrQueue } from '../../../../domain/deployments/start.js';
import { sweep } from '../../../../domain/deployments/sweep.js';
import type { Caller } from '../../../../domain/identity/types.js';
import { DynamoCommandRepository } from '../../../../infra/dynamodb/command-repository.js';
import { DynamoDeploymentEventStore } from '../../../../infra/dynamodb/deployment-event-store.js';
import { DynamoDeploymentRepository } from '../../../../infra/dynamodb/deployment-repository.js';
import { DynamoIdGenerator } from '../../../../infra/dynamodb/id-generator.js';
import { DynamoOrchestration } from '../../../../infra/dynamodb/orchestration.js';
import { DynamoPendingRequestRepository } from '../../../../infra/dynamodb/pending-request-repository.js';
import { aCommand } from '../../../fakes/commands.js';
import { aDraft } from '../../../fakes/deployments.js';
import { createServiceTable, dynamoClient, uniqueName } from '../../../support/aws.js';

const client = dynamoClient();
const db = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
const admin: Caller = {
  kind: 'user',
  userId: 'u1',
  tenantId: null,
  roles: ['admin'],
  permissions: new Set(['deployments:cancel']),
};

describe('the outbox and the sweep', () => {
  it('a process that dies after the terminal write loses nothing: the sweep delivers the cancel notice and dispatches the request behind', async () => {
    // Prepare: capacity 1, deployment A running with a delivered command, request B waiting behind it.
    const table = uniqueName('outbox');
    await createServiceTable(client, table);
    let offset = 0;
    const clock = { now: () => new Date(Date.now() + offset) };
    const orchestration = new DynamoOrchestration(db, table, 1);
    const pending = new DynamoPendingRequestRepository(db, table);
    const deployments = new DynamoDeploymentRepository(db, table);
    const commands = new DynamoCommandRepository(db, table);
    const events = new DynamoDeploymentEventStore(db, table);
    const woken: string[] = [];
    const deps: DispatchDeps = {
      orchestration,
      pending,
      dispatch: { wake: async (reason) => void woken.push(reason) },
      ids: new DynamoIdGenerator(db, table, { alphabet: 'abcdefghijklmnopqrstuvwxyz0123456789', minLength: 4 }),
      uuids: { uuid: () => randomUUID() },
      clock,
      settings: { maxRetries: 2 },
    };
    const a = await startOrQueue(deps, aDraft());
    if (a.kind !== 'started') throw new Error('A should have started');
    await commands.enqueue(
      aCommand({
        id: `${a.deployment.id}-cmd`,
        targetId: 'target-1',
        deploymentId: a.deployment.id,
        script: 'sleep 600',
        timeoutSeconds: 600,
      }),
    );
    expect((await commands.claimInbox('target-1', 1, new Date())).commands).toHaveLength(1); // the agent runs it
    const b = await startOrQueue(deps, aDraft({ triggeredBy: 'someone-else' }));
    expect(b.kind).toBe('queued');
    // Act 1: the cancel's terminal transaction commits, then the process "dies" before its side effects.
    const dying = {
      ...deps,
      commands,
      deployments,
      events,
      dispatch: {
        wake: async () => {
          throw new Error('the process died');
        },
      },
    };
    await expect(cancelDeployment(dying, admin, a.deployment.id, 'stop')).rejects.toThrow('the process died');
    // Assess 1: final state written and instance freed, but the request behind still waits and the outbox holds the debt.
    expect((await deployments.get(a.deployment.id))?.state).toBe('cancelled');
    expect((await orchestration.holders()).size).toBe(0);
    expect((await pending.queue(10)).map((r) => r.id)).toEqual([b.kind === 'queued' ? b.request.id : '']);
    expect(await orchestration.outbox(new Date(Date.now() + 60_000), 10)).toHaveLength(1);
    // Act 2: the sweep, a few seconds later; its dispatcher wake-up runs the dispatcher (here in-process).
    offset = 6_000;
    const sweepDeps = {
      ...deps,
      commands,
      events,
      engine: { wake: async () => undefined },
      dispatch: {
        wake: async (reason: string) => {
          woken.push(reason);
          await dispatchPending(deps);
        },
      },
    };
    const report = await sweep(sweepDeps);
    // Assess 2: the cancel notice reaches the agent, the request behind is dispatched, the outbox is empty.
    expect(report.settled).toEqual([a.deployment.id]);
    expect((await commands.claimInbox('target-1', 0, new Date())).cancel).toEqual([`${a.deployment.id}-cmd`]);
    expect(await pending.get(b.kind === 'queued' ? b.request.id : '')).toMatchObject({
      status: 'dispatched',
      dispatchedToInstanceId: 'instance-1',
    });
    expect(await orchestration.outbox(new Date(Date.now() + 60_000), 10)).toEqual([]);
    expect((await events.last(a.deployment.id))?.event).toMatchObject({ type: 'state_change', new_state: 'cancelled' });
    // A second sweep finds nothing left to do.
    expect(await sweep(sweepDeps)).toMatchObject({ settled: [], recovered: 0 });
  }, 60_000);
});

describe('the outbox entry of an end', () => {
  it("names the running steps' commands, and reads back with them (a stop that the index does not list yet)", async () => {
    // Prepare: a started deployment whose step runs
    const table = uniqueName('outboxcmd');
    await createServiceTable(client, table);
    const orchestration = new DynamoOrchestration(db, table, 1);
    const deps = {
      orchestration,
      pending: new DynamoPendingRequestRepository(db, table),
      dispatch: { wake: async () => undefined },
      ids: new DynamoIdGenerator(db, table, { alphabet: 'abcdefghijklmnopqrstuvwxyz0123456789', minLength: 4 }),
      uuids: { uuid: () => randomUUID() },
      clock: { now: () => new Date() },
      settings: { maxRetries: 2 },
    };
    const a = await startOrQueue(deps, aDraft());
    if (a.kind !== 'started') throw new Error('A should have started');
    const running = {
      ...a.deployment,
      plan: { ...a.deployment.plan, steps: a.deployment.plan.steps.map((s) => ({ ...s, state: 'running' as const })) },
    };
    const at = new Date().toISOString();
    const next = { ...running, state: 'cancelled' as const, completedAt: at, revision: running.revision + 1 };
    // Act
    expect(await orchestration.finish(running, next, owedBy(running, next))).toBe(true);
    // Assess
    const entry = await orchestration.outboxEntry(a.deployment.id, at);
    expect(entry?.openCommands).toEqual(running.plan.steps.map((s) => commandIdOf(s.id, 1)));
    expect(entry?.openCommands?.length).toBeGreaterThan(0);
  });
});

describe('keyed log events', () => {
  it('appends each (command, seq) group once; a retry after a lost append adds exactly what is missing', async () => {
    // Prepare
    const table = uniqueName('keyed');
    await createServiceTable(client, table);
    const store = new DynamoDeploymentEventStore(db, table);
    const line = (message: string): NewEvent => ({
      at: '2026-11-22T10:00:00.000Z',
      event: {
        type: 'log',
        log: {
          timestamp: '2026-11-22T10:00:00.000Z',
          level: 'info',
          step_id: null,
          target_id: null,
          target_name: null,
          message,
          metadata: null,
        },
      },
    });
    const group = (seq: number, part: number, lines: number) => ({
      key: `cmd-1#${seq}#${part}`,
      events: Array.from({ length: lines }, (_, i) => line(`seq ${seq} part ${part} line ${i}`)),
    });
    const retried = [group(0, 0, 3), group(1, 0, 90), group(1, 1, 30)];
    // Act: seq 0 appended; the append of seq 1 (two parts) was "lost" (crash); the agent retries seq 0 and 1, twice.
    await store.appendOnce('dep-1', [group(0, 0, 3)]);
    await store.appendOnce('dep-1', retried);
    await store.appendOnce('dep-1', retried);
    // Assess
    const all = await store.after('dep-1', 0, 1000);
    const messages = all.map((e) => (e.event.type === 'log' ? e.event.log.message : ''));
    expect(messages).toHaveLength(123);
    expect(new Set(messages).size).toBe(123);
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 123 }, (_, i) => i + 1));
  }, 60_000);
});
