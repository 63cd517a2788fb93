// The dispatcher: woken by a message on the dispatch queue (a request was queued, an instance was freed, the
// capacity was raised), it starts waiting requests while instances are free, highest priority and oldest first.
// pending -> processing -> dispatched, each a conditional write, so duplicate deliveries or two consumers never
// dispatch one request twice. A failed start is recorded (error_message, retry_count) and retried up to a limit,
// then the request is failed. A request left in processing by a consumer that died is put back after a minute.
//
// Queued work is checked again when it starts: a request that an active freeze now covers (and that carried no
// admin override) stays pending, records why and until when, and is passed over (requests behind it still go); a
// request whose triggering user is no longer active fails.
import { pendingRequestView } from './views.js';
import type { UserRepository } from '../identity/ports.js';
import { freezeApplies } from '../tenancy/freezes.js';
import type { FreezeRepository } from '../tenancy/ports.js';
import type { Freeze } from '../tenancy/types.js';
import type { PendingRequestRepository } from './ports.js';
import { engineStarted, newDeployment, type StartDeps } from './start.js';
import type { PendingRequest } from './types.js';

export const STALE_PROCESSING_MS = 60_000;
/** Pending requests looked at per round: frozen ones at the head of the queue do not hide the others. */
export const QUEUE_PAGE = 25;
export const INACTIVE_USER_MESSAGE = 'The user who queued this request is no longer active';

/** Thrown by Orchestration.start when the request left `processing` meanwhile (cancelled by a user). */
export class RequestNotProcessingError extends Error {
  constructor(readonly requestId: string) {
    super(`pending request ${requestId} is no longer processing`);
    this.name = 'RequestNotProcessingError';
  }
}

export interface DispatchDeps extends StartDeps {
  readonly settings: { readonly maxRetries: number };
  /** What a request is checked against again when it starts (absent in tests of queueing alone). */
  readonly recheck?: {
    readonly freezes: Pick<FreezeRepository, 'listEndingAfter'>;
    readonly users: Pick<UserRepository, 'get'>;
  };
}

export interface DispatchReport {
  readonly dispatched: readonly {
    readonly requestId: string;
    readonly deploymentId: string;
    /** Null: it had ended already when its lost answer was read back. */
    readonly instanceId: string | null;
  }[];
  readonly failed: readonly string[];
}

/** Puts back requests left in processing for more than a minute (one bounded query); answers how many. */
export const recoverStale = async (deps: { pending: PendingRequestRepository }, now: Date): Promise<number> => {
  const stuck = (await deps.pending.processing(QUEUE_PAGE)).filter(
    (r) => r.processingSince !== null && now.getTime() - Date.parse(r.processingSince) > STALE_PROCESSING_MS,
  );
  for (const request of stuck) await deps.pending.release(request, undefined);
  return stuck.length;
};

/** `2027-01-03T00:00:00+00:00` */
const offsetTime = (iso: string): string => `${new Date(iso).toISOString().slice(0, 19)}+00:00`;

export type Recheck =
  | { readonly kind: 'go' }
  | { readonly kind: 'frozen'; readonly reason: string; readonly until: string }
  | { readonly kind: 'inactive_user' };

/** The decision for one waiting request, given the freezes ending after `now` and its user's status. */
export const recheckRequest = (
  request: PendingRequest,
  freezes: readonly Freeze[],
  userStatus: string | undefined,
  now: Date,
): Recheck => {
  if (userStatus !== 'active') return { kind: 'inactive_user' };
  if (request.draft.freezeOverride !== null) return { kind: 'go' };
  const scope = {
    tenantId: request.draft.tenantId,
    solutionId: request.draft.solution?.id ?? null,
    environmentId: request.draft.environmentId,
  };
  const active = freezes
    .filter((f) => freezeApplies(f, scope, now))
    .sort((a, b) => b.endTime.localeCompare(a.endTime) || a.id.localeCompare(b.id));
  const last = active[0];
  if (last === undefined) return { kind: 'go' };
  const until = offsetTime(last.endTime);
  const others = active.length > 1 ? ` (and ${active.length - 1} other freeze(s))` : '';
  return { kind: 'frozen', reason: `Deployment freeze '${last.name}' is active until ${until}${others}`, until };
};

export const dispatchPending = async (deps: DispatchDeps): Promise<DispatchReport> => {
  await recoverStale(deps, deps.clock.now());
  const dispatched: { requestId: string; deploymentId: string; instanceId: string | null }[] = [];
  const failed: string[] = [];
  const freezes = deps.recheck === undefined ? [] : await deps.recheck.freezes.listEndingAfter(deps.clock.now());
  const statuses = new Map<string, string | undefined>();
  const statusOf = async (recheck: NonNullable<DispatchDeps['recheck']>, userId: string) => {
    if (!statuses.has(userId)) statuses.set(userId, (await recheck.users.get(userId))?.status);
    return statuses.get(userId);
  };
  /** Requests passed over in this run (frozen): the next page starts after them. */
  const passed = new Set<string>();
  for (let rounds = 0; rounds < 1000; rounds += 1) {
    const page = await deps.pending.queue(passed.size + QUEUE_PAGE);
    const waiting = page.filter((r) => !passed.has(r.id));
    if (waiting.length === 0) break;
    const [capacity, holders] = await Promise.all([deps.orchestration.capacity(), deps.orchestration.holders()]);
    if (holders.size >= capacity) break;
    let next: PendingRequest | undefined;
    for (const candidate of waiting) {
      const check =
        deps.recheck === undefined
          ? { kind: 'go' as const }
          : recheckRequest(candidate, freezes, await statusOf(deps.recheck, candidate.triggeredBy), deps.clock.now());
      if (check.kind === 'frozen') {
        passed.add(candidate.id);
        if (candidate.waitingReason !== check.reason || candidate.waitingUntil !== check.until)
          await deps.pending.setWaiting(candidate, check.reason, check.until);
        continue;
      }
      if (check.kind === 'inactive_user') {
        if (await deps.pending.claim(candidate, deps.clock.now())) {
          await deps.pending.fail({ ...candidate, status: 'processing' }, INACTIVE_USER_MESSAGE, deps.clock.now());
          failed.push(candidate.id);
        }
        passed.add(candidate.id);
        continue;
      }
      next = candidate;
      break;
    }
    if (next === undefined) {
      if (page.length < passed.size + QUEUE_PAGE) break; // the whole queue was looked at
      continue;
    }
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
      deps.metrics?.deploymentStarted(Math.max(0, Date.parse(deployment.createdAt) - Date.parse(claimed.createdAt)));
      await engineStarted(deps, deployment.id);
      const at = deployment.createdAt;
      await deps.webhooks?.emitter.emit({
        type: 'pending_request.dispatched',
        subject: [claimed.id],
        tenantId: claimed.tenantId,
        timestamp: at,
        since: claimed.createdAt,
        data: () =>
          pendingRequestView({
            ...claimed,
            status: 'dispatched',
            deploymentId: deployment.id,
            dispatchedAt: at,
            dispatchedToInstanceId: instanceId,
            processingSince: null,
          }),
      });
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
