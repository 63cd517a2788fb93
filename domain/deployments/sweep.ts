// The sweep: a scheduled safety net (every minute; locally a timer of the stack) for work whose trigger was lost.
// Every read is a bounded query on a narrow key, so an idle service's sweep costs a handful of small reads:
//   1. outbox entries older than OUTBOX_GRACE_MS (a process died between a terminal write and its side effects):
//      their effects are done again, then the entries removed;
//   2. requests stuck in processing for more than a minute (a dispatcher died) are put back in the queue;
//   3. deployments holding an instance whose periodic check has not run for LOST_CHECK_MS get a new check chain
//      (at most one: the re-arm is a conditional write on the instance item);
//   4. when requests are waiting and an instance is free, the dispatcher is woken (a lost wake-up, a freeze that
//      ended, a capacity written behind the service's back).
import type { Clock } from '../shared/ports.js';
import { recoverStale } from './dispatch.js';
import { CHECK_EVERY_SECONDS, type EngineQueue } from './engine.js';
import { settleOutbox, type OutboxDeps } from './outbox.js';
import type { Orchestration, PendingRequestRepository } from './ports.js';

/** An outbox entry younger than this is probably being settled by the pass that wrote it. */
export const OUTBOX_GRACE_MS = 5_000;
/** A periodic check runs every 10 s; none for this long means its chain was lost. */
export const LOST_CHECK_MS = 60_000;
/** Outbox entries settled per run; more wait for the next run. */
export const SWEEP_PAGE = 25;

export interface SweepDeps extends OutboxDeps {
  readonly orchestration: Orchestration;
  readonly pending: PendingRequestRepository;
  readonly engine: EngineQueue;
  readonly clock: Clock;
}

export interface SweepReport {
  /** Deployments whose owed side effects were done. */
  readonly settled: readonly string[];
  /** Requests put back from processing. */
  readonly recovered: number;
  /** Deployments given a new periodic check. */
  readonly rearmed: readonly string[];
  readonly wokeDispatcher: boolean;
  /** What failed (tried again on the next run). */
  readonly errors: readonly string[];
}

export const sweep = async (deps: SweepDeps): Promise<SweepReport> => {
  const now = deps.clock.now();
  const settled: string[] = [];
  const rearmed: string[] = [];
  const errors: string[] = [];
  for (const entry of await deps.orchestration.outbox(new Date(now.getTime() - OUTBOX_GRACE_MS), SWEEP_PAGE)) {
    try {
      await settleOutbox(deps, entry);
      settled.push(entry.deploymentId);
    } catch (error) {
      errors.push(`outbox of ${entry.deploymentId}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const recovered = await recoverStale(deps, now);
  const held = await deps.orchestration.heldInstances();
  for (const instance of held) {
    const last = instance.checkedAt ?? instance.heldSince;
    if (last !== null && now.getTime() - Date.parse(last) < LOST_CHECK_MS) continue;
    if (await deps.orchestration.recordCheck(instance.instanceId, instance.deploymentId, now, LOST_CHECK_MS)) {
      await deps.engine.wake(instance.deploymentId, { delaySeconds: CHECK_EVERY_SECONDS, check: true });
      rearmed.push(instance.deploymentId);
    }
  }
  let wokeDispatcher = false;
  const [waiting] = await deps.pending.queue(1);
  if (waiting !== undefined && held.length < (await deps.orchestration.capacity())) {
    await deps.dispatch.wake('sweep: requests wait and an instance is free');
    wokeDispatcher = true;
  }
  return { settled, recovered, rearmed, wokeDispatcher, errors };
};
