// Ports of the webhooks context. Adapters: infra/dynamodb/webhook-repository.ts, infra/sqs/webhook-queue.ts,
// infra/webhooks/webhook-sender.ts.
import type { Delivery, Subscription, SubscriptionChanges, WebhookEvent } from './types.js';

export interface SubscriptionRepository {
  create(subscription: Subscription): Promise<void>;
  get(id: string): Promise<Subscription | undefined>;
  /** The subscriptions of a tenant (null: the global ones), oldest first (an index: eventually consistent). */
  listByTenant(tenantId: string | null): Promise<readonly Subscription[]>;
  /** Writes the changes if the subscription is still at its revision; the updated one, or undefined. */
  update(subscription: Subscription, changes: SubscriptionChanges, at: string): Promise<Subscription | undefined>;
  delete(id: string): Promise<void>;
  /** Counts a delivery that exhausted its attempts (an atomic add); the new count, undefined when it is gone. */
  countFailure(id: string, at: string): Promise<number | undefined>;
  /** A delivered one: the count back to 0 (a plain write). */
  clearFailures(id: string): Promise<void>;
  /** Disabled by the service, with why (a plain write, only while enabled). */
  disable(id: string, reason: string, at: string): Promise<void>;
}

export interface DeliveryRepository {
  /** Stores a new delivery unless one with its id exists; false when it did (a re-emitted event). */
  create(delivery: Delivery): Promise<boolean>;
  get(id: string): Promise<Delivery | undefined>;
  /** A subscription's deliveries (kept 7 days), newest first. */
  listBySubscription(subscriptionId: string): Promise<readonly Delivery[]>;
  /**
   * Takes attempt `attempt` (state pending at attempt - 1, or its own lease expired): state sending until
   * `leaseUntil`. False when another consumer took it or it moved on.
   */
  claim(delivery: Delivery, attempt: number, leaseUntil: string, at: string): Promise<boolean>;
  /** Records the outcome of attempt `delivery.attempt` (still sending at it); false when it moved meanwhile. */
  record(delivery: Delivery, next: Delivery): Promise<boolean>;
  /** A delivered, failed or cancelled delivery made pending again with more attempts; false when it is not ended. */
  reopen(delivery: Delivery, next: Delivery): Promise<boolean>;
}

export type WebhookMessage =
  | { readonly kind: 'event'; readonly event: WebhookEvent }
  | { readonly kind: 'attempt'; readonly delivery_id: string; readonly attempt: number; readonly not_before: string }
  /** A target's socket closed: is it still silent when this arrives (target.offline)? */
  | { readonly kind: 'target_check'; readonly target_id: string; readonly connection_id: string };

export interface WebhookQueue {
  send(message: WebhookMessage, delaySeconds?: number): Promise<void>;
}

export interface SendResult {
  readonly statusCode: number | null;
  readonly durationMs: number;
  readonly body: string;
  /** Why no answer came (refused address, timeout, connection error), for the delivery log. */
  readonly error: string | null;
}

/** One signed POST to a receiver, guarded against SSRF, 10 s, redirects not followed, the answer's size capped. */
export interface WebhookSender {
  /** Why the URL is refused before any request (scheme, an internal address literal), or undefined. */
  urlProblem(url: string): string | undefined;
  /** Resolves the host and says why its addresses are refused, or undefined (at create: a name resolving inside). */
  resolveProblem(url: string): Promise<string | undefined>;
  post(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<SendResult>;
}

/** Standard Webhooks signing: `webhook-id`, `webhook-timestamp`, `webhook-signature` for a body. */
export interface WebhookSigner {
  newSecret(): string;
  sign(secret: string, id: string, at: Date, body: string): Readonly<Record<string, string>>;
}
