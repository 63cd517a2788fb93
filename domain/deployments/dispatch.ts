// The dispatcher: woken by a message on the dispatch queue (a request was queued, an instance was freed, the
// capacity was raised), it starts waiting requests while instances are free, highest priority and oldest first.
// pending -> processing -> dispatched, each a conditional write, so duplicate deliveries or two consumers never
// dispatch one request twice. A failed start is recorded (error_message, retry_count) and retried up to a limit,
// then the request is failed. A request left in processing by a consumer that died is put back after a minute.
import type { PendingRequestRepository } from './ports.js';
import { engineStarted, newDeployment, type StartDeps } from './start.js';
import type { PendingRequest } from './types.js';

export const STALE_PROCESSING_MS = 60_000;

/** Thrown by Orchestration.start when the request left `processing` meanwhile (cancelled by a user). */
export class RequestNotProcessingError extends Error {
  constructor(readonly requestId: string) {
    super(`pending request ${requestId} is no longer processing`);
    this.name = 'RequestNotProcessingError';
  }
}

export interface DispatchDeps extends StartDeps {
  readonly settings: { readonly maxRetries: number };
}

export interface DispatchReport {
  readonly dispatched: readonly { readonly requestId: string; readonly deploymentId: string; readonly instanceId: string }[];
  readonly failed: readonly string[];
}

const recoverStale = async (deps: { pending: PendingRequestRepository }, now: Date): Promise<void> => {
  const stuck = (await deps.pending.listAll()).filter((r) => r.status === 'processing' && r.processingSince !== null && now.getTime() - Date.parse(r.processingSince) > STALE_PROCESSING_MS);
  for (const request of stuck) await deps.pending.release(request, undefined);
};

export const dispatchPending = async (deps: DispatchDeps): Promise<DispatchReport> => {
  await recoverStale(deps, deps.clock.now());
  const dispatched: { requestId: string; deploymentId: string; instanceId: string }[] = [];
  const failed: string[] = [];
  for (let rounds = 0; rounds < 1000; rounds += 1) {
    const [next] = await deps.pending.queue(1);
    if (next === undefined) break;
    const [capacity, holders] = await Promise.all([deps.orchestration.capacity(), deps.orchestration.holders()]);
    if (holders.size >= capacity) break;
    if (!(await deps.pending.claim(next, deps.clock.now()))) continue; // another consumer took it
    const claimed: PendingRequest = { ...next, status: 'processing' };
    try {
      const deployment = await newDeployment(deps, claimed.draft);
      const instanceId = await deps.orchestration.start(deployment, { request: claimed, at: deps.clock.now() });
      if (instanceId === undefined) {
        await deps.pending.release(claimed, undefined); // the instance went to a create meanwhile
        break;
      }
      dispatched.push({ requestId: claimed.id, deploymentId: deployment.id, instanceId });
      await engineStarted(deps, deployment.id);
    } catch (error) {
      if (error instanceof RequestNotProcessingError) continue; // cancelled while we worked
      const message = error instanceof Error ? error.message : String(error);
      if (claimed.retryCount + 1 > deps.settings.maxRetries) {
        await deps.pending.fail(claimed, `Dispatch failed: ${message}`, deps.clock.now());
        failed.push(claimed.id);
      } else {
        await deps.pending.release(claimed, { message: `Dispatch failed: ${message}`, at: deps.clock.now() });
        throw error; // the message is retried by the queue (and lands in its dead-letter queue if it keeps failing)
      }
    }
  }
  return { dispatched, failed };
};
