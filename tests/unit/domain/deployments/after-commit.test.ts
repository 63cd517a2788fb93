// A committed create never fails: what fails after the transaction (the engine's wake-ups, the dispatcher's
// wake-up, the read-back of the queue position, the queued event) is tried again briefly, then left to the sweep,
// and the answer is the 201/202 built from what was written.
import { describe, expect, it } from 'vitest';
import { dispatchPending, type DispatchDeps } from '../../../../domain/deployments/dispatch.js';
import type { EngineQueue } from '../../../../domain/deployments/engine.js';
import { AFTER_COMMIT_ATTEMPTS, afterCommit, startOrQueue } from '../../../../domain/deployments/start.js';
import { sweep } from '../../../../domain/deployments/sweep.js';
import { aDraft, deploymentsFakes } from '../../../fakes/deployments.js';
import { FakeCommandRepository } from '../../../fakes/targets.js';

const down = (what: string) => new Error(`${what} cannot be reached right now`);

/** An engine queue whose wake-ups fail `failures` times before they pass. */
const flakyEngine = (failures = Infinity) => {
  const woken: { id: string; check: boolean }[] = [];
  let failed = 0;
  const engine: EngineQueue = {
    wake: async (id, options) => {
      if (failed < failures) {
        failed += 1;
        throw down('the engine queue');
      }
      woken.push({ id, check: options?.check ?? false });
    },
  };
  return { engine, woken, calls: () => failed + woken.length };
};

const setup = (capacity: number, engine?: EngineQueue) => {
  const fakes = deploymentsFakes(capacity);
  const lost: string[] = [];
  let n = 0;
  const deps: DispatchDeps = {
    ...fakes.deps,
    uuids: { uuid: () => `r-${(n += 1)}` },
    settings: { maxRetries: 1 },
    ...(engine === undefined ? {} : { engine }),
    afterCommitFailed: (what) => lost.push(what),
  };
  return { ...fakes, deps, lost };
};

describe('afterCommit', () => {
  it('answers the work when it passes, and the fallback (told) after one failed try: the SDK already retried', async () => {
    const told: string[] = [];
    let calls = 0;
    const passes = await afterCommit(
      {},
      'x',
      async () => {
        calls += 1;
        return 'done';
      },
      'fallback',
    );
    let failing = 0;
    const givenUp = await afterCommit(
      { afterCommitFailed: (what) => told.push(what) },
      'y',
      async () => {
        failing += 1;
        throw down('y');
      },
      'fallback',
    );

    expect([passes, calls]).toEqual(['done', 1]);
    expect([givenUp, failing, told]).toEqual(['fallback', 1, ['y']]);
    expect(AFTER_COMMIT_ATTEMPTS).toBe(1);
  });
});

describe('a create whose transaction committed', () => {
  it('started: the engine queue failing every wake-up still answers started, and the sweep re-arms the check later', async () => {
    const flaky = flakyEngine();
    const { deps, lost, deployments, orchestration, clock } = setup(1, flaky.engine);

    const outcome = await startOrQueue(deps, aDraft());

    expect(outcome.kind).toBe('started');
    const id = outcome.kind === 'started' ? outcome.deployment.id : '';
    expect((await deployments.get(id))?.state).toBe('running');
    expect(lost).toEqual([`first engine pass of ${id}`, `check chain of ${id}`]);
    expect(flaky.calls()).toBe(2 * AFTER_COMMIT_ATTEMPTS);

    // The queue is back: the sweep, a minute later, gives the deployment its check chain.
    const healthy = flakyEngine(0);
    clock.advance(61_000);
    const report = await sweep({
      ...deps,
      engine: healthy.engine,
      orchestration,
      commands: new FakeCommandRepository(),
    });
    expect(report.rearmed).toEqual([id]);
    expect(healthy.woken).toEqual([{ id, check: true }]);
  });

  it('started: a wake-up failing once is not stacked on the SDK retries: given up (told), the next one still sent', async () => {
    const flaky = flakyEngine(1);
    const { deps, lost } = setup(1, flaky.engine);

    const outcome = await startOrQueue(deps, aDraft());

    expect(outcome.kind).toBe('started');
    const id = outcome.kind === 'started' ? outcome.deployment.id : '';
    expect(lost).toEqual([`first engine pass of ${id}`]);
    expect(flaky.woken.map((w) => w.check)).toEqual([true]);
  });

  it('queued: the dispatcher wake-up and the position read failing still answer queued, with the request stored', async () => {
    const { deps, lost, pending, dispatch } = setup(1, flakyEngine(0).engine);
    await startOrQueue(deps, aDraft()); // takes the only instance
    dispatch.wake = async () => {
      throw down('the dispatch queue');
    };
    let counts = 0;
    pending.position = async () => {
      counts += 1;
      throw down('the table'); // the read before the write passed, the count after it fails
    };

    const outcome = await startOrQueue(deps, aDraft());

    expect(outcome.kind).toBe('queued');
    const request = outcome.kind === 'queued' ? outcome.request : undefined;
    expect(outcome.kind === 'queued' ? outcome.position : 0).toBe(1);
    expect((await pending.get(request?.id ?? ''))?.status).toBe('pending');
    expect(lost).toEqual([`dispatcher wake-up for ${request?.id}`, `queue position of ${request?.id}`]);
    expect(counts).toBe(1);
  });

  it('queued: an event emitter that throws does not fail the create', async () => {
    const { deps, lost } = setup(0);
    const emitted: string[] = [];
    const outcome = await startOrQueue(
      {
        ...deps,
        webhooks: {
          deployments: { get: async () => undefined },
          emitter: {
            emit: async (event: { type: string }) => {
              emitted.push(event.type);
              throw down('the webhook store');
            },
          },
        } as unknown as NonNullable<DispatchDeps['webhooks']>,
      },
      aDraft(),
    );

    expect(outcome.kind).toBe('queued');
    expect(emitted).toHaveLength(AFTER_COMMIT_ATTEMPTS);
    expect(lost).toHaveLength(1);
  });

  it('dispatched: the dispatcher whose engine wake-ups fail after the start keeps the request dispatched (no release, no retry)', async () => {
    const flaky = flakyEngine();
    const { deps, pending, orchestration } = setup(1, flaky.engine);
    await startOrQueue(deps, aDraft()); // takes the only instance
    const queued = await startOrQueue(deps, aDraft());
    const id = queued.kind === 'queued' ? queued.request.id : '';
    await orchestration.setCapacity(2);

    const result = await dispatchPending(deps);

    expect(result.dispatched.map((d) => d.requestId)).toEqual([id]);
    expect((await pending.get(id))?.status).toBe('dispatched');
  });
});
