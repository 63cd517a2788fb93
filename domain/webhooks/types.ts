// Outgoing webhooks (issue 18, outbound): subscriptions of a tenant to events, and the deliveries of each event to
// each subscription, signed per Standard Webhooks, and the event types they may name (a leaf: events.ts builds on
// it). decisions.md, "Webhooks (issue 18, outbound)".
import type { Permission } from '../identity/permissions.js';

/** Event type -> the read permission of its resource (a subscriber must hold it: nobody hears what they cannot read). */
export const EVENT_TYPES = {
  'deployment.created': 'deployments:read',
  'deployment.started': 'deployments:read',
  'deployment.succeeded': 'deployments:read',
  'deployment.failed': 'deployments:read',
  'deployment.cancelled': 'deployments:read',
  'deployment.rolled_back': 'deployments:read',
  'pending_request.queued': 'pending_deployments:read',
  'pending_request.dispatched': 'pending_deployments:read',
  'target.online': 'targets:read',
  'target.offline': 'targets:read',
  'analysis.completed': 'analysis:read',
} as const satisfies Readonly<Record<string, Permission>>;

export type SubscribableType = keyof typeof EVENT_TYPES;
/** `ping` is never subscribed to: `POST /webhooks/{id}/test` sends one to that subscription only. */
export type EventType = SubscribableType | 'ping';
export const SUBSCRIBABLE_TYPES = Object.keys(EVENT_TYPES) as SubscribableType[];

export const isSubscribable = (type: string): type is SubscribableType => Object.hasOwn(EVENT_TYPES, type);

export type WebhookFormat = 'standard' | 'slack';

export interface Subscription {
  readonly id: string;
  /** The tenant it belongs to (the creator's); null: a global subscription, which hears every tenant's events. */
  readonly tenantId: string | null;
  readonly url: string;
  readonly description: string | null;
  readonly eventTypes: readonly EventType[];
  readonly format: WebhookFormat;
  readonly enabled: boolean;
  /** Why the service disabled it (keeps failing, 410 Gone); null when enabled or disabled by a person. */
  readonly disabledReason: string | null;
  readonly disabledAt: string | null;
  /** Deliveries in a row that exhausted every attempt (reset by any delivered one). */
  readonly consecutiveFailures: number;
  /** The signing secret (`whsec_` + base64), sealed with the SecretCipher: signing needs the secret itself. */
  readonly sealedSecret: string;
  readonly createdBy: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly revision: number;
}

export type SubscriptionChanges = Partial<
  Pick<
    Subscription,
    | 'url'
    | 'description'
    | 'eventTypes'
    | 'format'
    | 'enabled'
    | 'disabledReason'
    | 'disabledAt'
    | 'consecutiveFailures'
    | 'sealedSecret'
  >
>;

/** pending (an attempt is due at nextAttemptAt), sending (an attempt holds its lease), then one of the ends. */
export type DeliveryState = 'pending' | 'sending' | 'delivered' | 'failed' | 'cancelled';

export interface AttemptRecord {
  readonly attempt: number;
  readonly at: string;
  readonly statusCode: number | null;
  readonly durationMs: number;
  readonly error: string | null;
}

export interface Delivery {
  /** `msg_` + 32 hex: derived from (subscription id, event id); the `webhook-id` of every attempt. */
  readonly id: string;
  readonly subscriptionId: string;
  readonly eventId: string;
  readonly eventType: EventType;
  /** The event as JSON (`{type, timestamp, data, version}`), kept so retries and redeliveries send the same. */
  readonly event: string;
  readonly state: DeliveryState;
  /** Attempts made so far (0: none yet). */
  readonly attempt: number;
  /** Attempts allowed up to (a redeliver extends it by a whole schedule). */
  readonly maxAttempt: number;
  readonly leaseUntil: string | null;
  readonly nextAttemptAt: string | null;
  readonly statusCode: number | null;
  readonly durationMs: number | null;
  /** The start of the receiver's answer, cut and stripped of control characters. */
  readonly responseExcerpt: string | null;
  readonly error: string | null;
  readonly attempts: readonly AttemptRecord[];
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** An event as emitted, before fan-out: `data` is the record as the API shows it. */
export interface WebhookEvent {
  readonly id: string;
  readonly type: EventType;
  readonly tenantId: string | null;
  readonly timestamp: string;
  readonly data: unknown;
}
