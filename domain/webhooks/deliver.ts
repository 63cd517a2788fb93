// The webhook queue's consumer: an `event` message fans out to the subscriptions that want it (one delivery each,
// created only if absent, so a re-emitted event makes none twice); an `attempt` message makes one signed POST.
//
// An attempt: (a hop, when its time is further away than SQS can delay) -> claim it (a conditional write: pending at
// the previous attempt, or a lease that expired) -> read the subscription and open its secret -> sign and send -> record
// the outcome conditioned on still holding it -> 2xx delivered; 410 Gone disables the subscription; else the next
// attempt is scheduled (exponential backoff with jitter, schedule.ts) or, after the last, the delivery failed and the
// subscription's run of failures counted (disabled at the threshold). A message for an attempt already made, or for
// an ended delivery, changes nothing.
import type { SecretCipher } from '../identity/ports.js';
import type { TargetRepository } from '../targets/ports.js';
import { statusOf } from '../targets/status.js';
import { targetView } from '../targets/views.js';
import type { Clock } from '../shared/ports.js';
import { bodyFor, eventBody, eventId, type SubscribableType } from './events.js';
import type {
  DeliveryRepository,
  SendResult,
  SubscriptionRepository,
  WebhookMessage,
  WebhookQueue,
  WebhookSender,
  WebhookSigner,
} from './ports.js';
import { attemptInRound, MAX_QUEUE_DELAY_SECONDS, retryDelayMs, type RetrySchedule } from './schedule.js';
import { newDelivery, secretContext } from './subscriptions.js';
import type { AttemptRecord, Delivery, Subscription, WebhookEvent } from './types.js';

export interface DeliverDeps {
  readonly subscriptions: SubscriptionRepository;
  readonly deliveries: DeliveryRepository;
  readonly queue: WebhookQueue;
  readonly sender: Pick<WebhookSender, 'post'>;
  readonly signer: Pick<WebhookSigner, 'sign'>;
  readonly cipher: SecretCipher;
  readonly clock: Clock;
  readonly schedule: RetrySchedule;
  /** Exhausted deliveries in a row that disable a subscription. */
  readonly disableAfter: number;
  /** The public base URL (links in Slack messages). */
  readonly baseUrl: string;
  /** Waits (a sub-second remainder of a scheduled time; SQS delays whole seconds). */
  readonly sleep: (ms: number) => Promise<void>;
  /** Where a target is read for the offline check after its socket closed. */
  readonly targets?: Pick<TargetRepository, 'get'>;
}

/** An attempt holds its delivery this long (10 s timeout plus margin); a consumer that died is taken over after. */
export const LEASE_MS = 30_000;
export const EXCERPT_CHARS = 1024;
const ATTEMPTS_KEPT = 20;

export type Outcome = 'fanned_out' | 'hopped' | 'delivered' | 'retrying' | 'failed' | 'cancelled' | 'skipped' | 'busy';

/**
 * The start of a receiver's answer as text safe to show: control characters (ANSI escapes included) and unpaired
 * surrogates dropped, cut to EXCERPT_CHARS. Views render it as text (never HTML).
 */
export const excerpt = (body: string): string =>
  body
    .slice(0, EXCERPT_CHARS * 2)
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '')
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '')
    .slice(0, EXCERPT_CHARS);

const subscribers = async (deps: Pick<DeliverDeps, 'subscriptions'>, event: WebhookEvent) => {
  const scopes = event.tenantId === null ? [null] : [event.tenantId, null];
  const lists = await Promise.all(scopes.map((tenant) => deps.subscriptions.listByTenant(tenant)));
  return lists.flat().filter((s) => s.enabled && s.eventTypes.includes(event.type as SubscribableType));
};

/** One delivery per subscription that wants the event; one already there is sent again only if never tried. */
export const fanOut = async (deps: DeliverDeps, event: WebhookEvent): Promise<void> => {
  const json = eventBody(event);
  const now = deps.clock.now().toISOString();
  for (const subscription of await subscribers(deps, event)) {
    const delivery = newDelivery(subscription, event, json, now);
    const created = await deps.deliveries.create(delivery);
    // A re-emitted event: its delivery may have been stored by a consumer that died before sending the attempt.
    const existing = created ? delivery : await deps.deliveries.get(delivery.id);
    if (existing !== undefined && existing.state === 'pending' && existing.attempt === 0)
      await deps.queue.send({ kind: 'attempt', delivery_id: delivery.id, attempt: 1, not_before: now });
  }
};

const sendAt = async (deps: Pick<DeliverDeps, 'queue'>, deliveryId: string, attempt: number, at: Date, now: Date) => {
  const delay = Math.max(0, Math.min(MAX_QUEUE_DELAY_SECONDS, Math.floor((at.getTime() - now.getTime()) / 1000)));
  await deps.queue.send({ kind: 'attempt', delivery_id: deliveryId, attempt, not_before: at.toISOString() }, delay);
};

const finished = (
  delivery: Delivery,
  state: Delivery['state'],
  result: SendResult | undefined,
  error: string | null,
  at: string,
  nextAttemptAt: string | null = null,
): Delivery => {
  const record: AttemptRecord | undefined =
    result === undefined
      ? undefined
      : { attempt: delivery.attempt, at, statusCode: result.statusCode, durationMs: result.durationMs, error };
  return {
    ...delivery,
    state,
    leaseUntil: null,
    nextAttemptAt,
    statusCode: result?.statusCode ?? delivery.statusCode,
    durationMs: result?.durationMs ?? delivery.durationMs,
    responseExcerpt: result === undefined ? delivery.responseExcerpt : excerpt(result.body),
    error,
    attempts: record === undefined ? delivery.attempts : [...delivery.attempts, record].slice(-ATTEMPTS_KEPT),
    updatedAt: at,
  };
};

/** Why an answer is not a delivery (null for a 2xx). */
const failureOf = (result: SendResult): string | null => {
  if (result.error !== null) return result.error;
  const code = result.statusCode ?? 0;
  return code >= 200 && code < 300 ? null : `The receiver answered ${code}.`;
};

export const attempt = async (
  deps: DeliverDeps,
  message: Extract<WebhookMessage, { kind: 'attempt' }>,
): Promise<Outcome> => {
  const now = deps.clock.now();
  const due = new Date(message.not_before);
  const wait = due.getTime() - now.getTime();
  if (wait > 1000) {
    await sendAt(deps, message.delivery_id, message.attempt, due, now);
    return 'hopped';
  }
  if (wait > 0) await deps.sleep(wait);

  const delivery = await deps.deliveries.get(message.delivery_id);
  if (delivery === undefined || !['pending', 'sending'].includes(delivery.state)) return 'skipped';
  if (delivery.state === 'pending' && delivery.attempt === message.attempt && delivery.nextAttemptAt !== null) {
    // This attempt's outcome is recorded but the next attempt's message may never have been sent: send it (again).
    await sendAt(deps, delivery.id, delivery.attempt + 1, new Date(delivery.nextAttemptAt), now);
    return 'skipped';
  }
  const at = deps.clock.now().toISOString();
  const leaseUntil = new Date(deps.clock.now().getTime() + LEASE_MS).toISOString();
  if (!(await deps.deliveries.claim(delivery, message.attempt, leaseUntil, at))) {
    // Held by a live consumer at this attempt: let SQS bring the message back after its lease.
    return delivery.state === 'sending' && delivery.attempt === message.attempt ? 'busy' : 'skipped';
  }
  const held: Delivery = { ...delivery, state: 'sending', attempt: message.attempt, leaseUntil, updatedAt: at };

  const subscription = await deps.subscriptions.get(delivery.subscriptionId);
  const gone = subscription === undefined ? 'The webhook was deleted.' : undefined;
  const off =
    subscription !== undefined && !subscription.enabled && delivery.eventType !== 'ping'
      ? `The webhook is disabled${subscription.disabledReason === null ? '' : `: ${subscription.disabledReason}`}.`
      : undefined;
  if (subscription === undefined || off !== undefined) {
    await deps.deliveries.record(held, finished(held, 'cancelled', undefined, gone ?? off ?? null, at));
    return 'cancelled';
  }
  return send(deps, subscription, held);
};

const send = async (deps: DeliverDeps, subscription: Subscription, held: Delivery): Promise<Outcome> => {
  const secret = deps.cipher.decrypt(subscription.sealedSecret, secretContext(subscription.id));
  const body = bodyFor(subscription.format, held.event, deps.baseUrl);
  const headers = { 'content-type': 'application/json', ...deps.signer.sign(secret, held.id, deps.clock.now(), body) };
  const result = await deps.sender.post(subscription.url, headers, body);
  const now = deps.clock.now();
  const at = now.toISOString();
  const failure = failureOf(result);

  if (failure === null) {
    await deps.deliveries.record(held, finished(held, 'delivered', result, null, at));
    if (subscription.consecutiveFailures > 0) await deps.subscriptions.clearFailures(subscription.id);
    return 'delivered';
  }
  if (result.statusCode === 410) {
    await deps.deliveries.record(held, finished(held, 'failed', result, failure, at));
    await deps.subscriptions.disable(subscription.id, 'The receiver answered 410 Gone.', at);
    return 'failed';
  }
  const delay = held.attempt < held.maxAttempt ? retryDelayMs(deps.schedule, attemptInRound(held.attempt)) : undefined;
  if (delay !== undefined) {
    const next = new Date(now.getTime() + delay);
    const pending = finished(held, 'pending', result, failure, at, next.toISOString());
    if (await deps.deliveries.record(held, pending)) await sendAt(deps, held.id, held.attempt + 1, next, now);
    return 'retrying';
  }
  if (!(await deps.deliveries.record(held, finished(held, 'failed', result, failure, at)))) return 'failed';
  if (held.eventType === 'ping') return 'failed'; // a test ping never counts against the subscription
  const count = await deps.subscriptions.countFailure(subscription.id, at);
  if (count !== undefined && count >= deps.disableAfter)
    await deps.subscriptions.disable(
      subscription.id,
      `${count} deliveries in a row failed after every attempt (the last: ${failure})`,
      at,
    );
  return 'failed';
};

/**
 * After a socket closed (agent-channel.ts): a target that did not come back (no new connection, no heartbeat for a
 * minute: not online by the usual rule) is offline. One event per closed connection.
 */
export const checkTarget = async (
  deps: DeliverDeps,
  message: Extract<WebhookMessage, { kind: 'target_check' }>,
): Promise<Outcome> => {
  const target = await deps.targets?.get(message.target_id);
  const now = deps.clock.now();
  if (target === undefined || statusOf(target, now) === 'online') return 'skipped';
  await fanOut(deps, {
    id: eventId('target.offline', target.id, message.connection_id),
    type: 'target.offline',
    tenantId: target.tenantId,
    timestamp: now.toISOString(),
    data: targetView(target, now),
  });
  return 'fanned_out';
};

export const handleMessage = async (deps: DeliverDeps, message: WebhookMessage): Promise<Outcome> => {
  if (message.kind === 'event') {
    await fanOut(deps, message.event);
    return 'fanned_out';
  }
  if (message.kind === 'target_check') return checkTarget(deps, message);
  return attempt(deps, message);
};
