// Webhook subscriptions of the caller's tenant: create, list, get, update, delete, rotate the secret, send a test
// ping, read the delivery log and redeliver one delivery. Permissions (the spec's 57 stay 57): tenants:read to view,
// tenants:update to manage (the route's permission), and for every event type subscribed to, the read permission of
// its resource (deployments:read, pending_deployments:read, targets:read, analysis:read), so that nobody has sent
// elsewhere what they could not read. Another tenant's subscription is 404. A URL is often a credential itself
// (Slack's incoming webhooks, tokens in a path or query): readers without tenants:update see only its scheme and
// host (`https://hooks.slack.com/…`, see redactedUrl).
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { InsufficientPermissionsError } from '../identity/errors.js';
import type { SecretCipher } from '../identity/ports.js';
import type { Caller } from '../identity/types.js';
import type { Clock } from '../shared/ports.js';
import { pageOf, type PageRequest } from '../shared/pagination.js';
import { DELIVERY_ID, deliveryId, EVENT_TYPES, eventBody, eventId, type SubscribableType } from './events.js';
import type {
  DeliveryRepository,
  SubscriptionRepository,
  WebhookQueue,
  WebhookSender,
  WebhookSigner,
} from './ports.js';
import { MAX_ATTEMPTS } from './schedule.js';
import type { Delivery, Subscription, WebhookFormat } from './types.js';

export interface WebhooksDeps {
  readonly subscriptions: SubscriptionRepository;
  readonly deliveries: DeliveryRepository;
  readonly queue: WebhookQueue;
  readonly sender: Pick<WebhookSender, 'urlProblem' | 'resolveProblem'>;
  readonly signer: Pick<WebhookSigner, 'newSecret'>;
  readonly cipher: SecretCipher;
  readonly clock: Clock;
  readonly uuid: () => string;
}

export const MAX_SUBSCRIPTIONS_PER_TENANT = 20;
/** Deliveries are kept this long (TTL), and the log shows them. */
export const DELIVERY_RETENTION_DAYS = 7;

export const secretContext = (id: string): string => `webhook:${id}`;

export interface SubscriptionCommand {
  readonly url: string;
  readonly description?: string | null | undefined;
  readonly event_types: readonly SubscribableType[];
  readonly format?: WebhookFormat | undefined;
  readonly enabled?: boolean | undefined;
}

/** What a reader without tenants:update sees of a URL: scheme, host (and a non-default port), then `/…`. */
export const redactedUrl = (raw: string): string => {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}/…`;
  } catch {
    return '…';
  }
};

/** Whether the caller sees webhook URLs whole: those who may manage webhooks (tenants:update, a key's scopes too). */
const seesFullUrl = (caller: Caller): boolean => caller.permissions.has('tenants:update');

/** A subscription as the caller may see it: the URL whole for tenants:update holders, else redacted. */
export const subscriptionView = (s: Subscription, caller: Caller) => ({
  id: s.id,
  tenant_id: s.tenantId,
  url: seesFullUrl(caller) ? s.url : redactedUrl(s.url),
  description: s.description,
  event_types: [...s.eventTypes],
  format: s.format,
  enabled: s.enabled,
  disabled_reason: s.disabledReason,
  disabled_at: s.disabledAt,
  consecutive_failures: s.consecutiveFailures,
  created_by: s.createdBy,
  created_at: s.createdAt,
  updated_at: s.updatedAt,
});

export const deliveryView = (d: Delivery) => ({
  id: d.id,
  subscription_id: d.subscriptionId,
  event_id: d.eventId,
  event_type: d.eventType,
  state: d.state,
  attempt: d.attempt,
  status_code: d.statusCode,
  duration_ms: d.durationMs,
  response_excerpt: d.responseExcerpt,
  error: d.error,
  next_attempt_at: d.state === 'pending' ? d.nextAttemptAt : null,
  attempts: d.attempts.map((a) => ({
    attempt: a.attempt,
    at: a.at,
    status_code: a.statusCode,
    duration_ms: a.durationMs,
    error: a.error,
  })),
  created_at: d.createdAt,
  updated_at: d.updatedAt,
});

/** Every event type's read permission must be the caller's (an API key's scopes included). */
const checkEventPermissions = (caller: Caller, types: readonly SubscribableType[]) => {
  const missing = [...new Set(types.map((t) => EVENT_TYPES[t]))].filter((p) => !caller.permissions.has(p));
  if (missing.length > 0) throw new InsufficientPermissionsError(missing);
};

const checkUrl = async (deps: Pick<WebhooksDeps, 'sender'>, url: string) => {
  const problem = deps.sender.urlProblem(url) ?? (await deps.sender.resolveProblem(url));
  if (problem !== undefined) throw ValidationError.field('url', `The URL ${problem}.`);
};

const own = async (deps: Pick<WebhooksDeps, 'subscriptions'>, caller: Caller, id: string): Promise<Subscription> => {
  const found = await deps.subscriptions.get(id);
  if (found === undefined || found.tenantId !== caller.tenantId) throw new NotFoundError('Webhook', id);
  return found;
};

export const createSubscription = async (deps: WebhooksDeps, caller: Caller, command: SubscriptionCommand) => {
  checkEventPermissions(caller, command.event_types);
  await checkUrl(deps, command.url);
  if ((await deps.subscriptions.listByTenant(caller.tenantId)).length >= MAX_SUBSCRIPTIONS_PER_TENANT)
    throw new ConflictError(`At most ${MAX_SUBSCRIPTIONS_PER_TENANT} webhooks per tenant: delete one first.`);
  const id = deps.uuid();
  const secret = deps.signer.newSecret();
  const now = deps.clock.now().toISOString();
  const subscription: Subscription = {
    id,
    tenantId: caller.tenantId,
    url: command.url,
    description: command.description ?? null,
    eventTypes: [...new Set(command.event_types)],
    format: command.format ?? 'standard',
    enabled: command.enabled ?? true,
    disabledReason: null,
    disabledAt: null,
    consecutiveFailures: 0,
    sealedSecret: deps.cipher.encrypt(secret, secretContext(id)),
    createdBy: caller.userId,
    createdAt: now,
    updatedAt: now,
    revision: 1,
  };
  await deps.subscriptions.create(subscription);
  return { ...subscriptionView(subscription, caller), secret };
};

export const listSubscriptions = async (deps: Pick<WebhooksDeps, 'subscriptions'>, caller: Caller, page: PageRequest) =>
  pageOf(
    (await deps.subscriptions.listByTenant(caller.tenantId)).map((s) => subscriptionView(s, caller)),
    page,
  );

export const getSubscription = async (deps: Pick<WebhooksDeps, 'subscriptions'>, caller: Caller, id: string) =>
  subscriptionView(await own(deps, caller, id), caller);

export const updateSubscription = async (
  deps: WebhooksDeps,
  caller: Caller,
  id: string,
  command: Partial<SubscriptionCommand>,
) => {
  const found = await own(deps, caller, id);
  // The caller must be able to read everything the subscription will send, not only what they add.
  checkEventPermissions(caller, (command.event_types ?? found.eventTypes) as SubscribableType[]);
  if (command.url !== undefined) await checkUrl(deps, command.url);
  const enabling = command.enabled === true && !found.enabled;
  const updated = await deps.subscriptions.update(
    found,
    {
      url: command.url,
      description: command.description,
      eventTypes: command.event_types === undefined ? undefined : [...new Set(command.event_types)],
      format: command.format,
      enabled: command.enabled,
      // Enabled again by a person: the service's reason and its count start over.
      ...(enabling ? { disabledReason: null, disabledAt: null, consecutiveFailures: 0 } : {}),
    },
    deps.clock.now().toISOString(),
  );
  if (updated === undefined) throw new ConflictError('The webhook changed meanwhile; read it again.');
  return subscriptionView(updated, caller);
};

export const deleteSubscription = async (deps: Pick<WebhooksDeps, 'subscriptions'>, caller: Caller, id: string) => {
  await own(deps, caller, id);
  await deps.subscriptions.delete(id);
};

export const rotateSubscriptionSecret = async (deps: WebhooksDeps, caller: Caller, id: string) => {
  const found = await own(deps, caller, id);
  const secret = deps.signer.newSecret();
  const updated = await deps.subscriptions.update(
    found,
    { sealedSecret: deps.cipher.encrypt(secret, secretContext(id)) },
    deps.clock.now().toISOString(),
  );
  if (updated === undefined) throw new ConflictError('The webhook changed meanwhile; try again.');
  return { id, secret };
};

/** A new delivery of `eventJson` to the subscription, pending its first attempt. */
export const newDelivery = (
  subscription: Pick<Subscription, 'id'>,
  event: { readonly id: string; readonly type: Delivery['eventType'] },
  eventJson: string,
  now: string,
): Delivery => ({
  id: deliveryId(subscription.id, event.id),
  subscriptionId: subscription.id,
  eventId: event.id,
  eventType: event.type,
  event: eventJson,
  state: 'pending',
  attempt: 0,
  maxAttempt: MAX_ATTEMPTS,
  leaseUntil: null,
  nextAttemptAt: now,
  statusCode: null,
  durationMs: null,
  responseExcerpt: null,
  error: null,
  attempts: [],
  createdAt: now,
  updatedAt: now,
});

/** POST /webhooks/{id}/test: a `ping` event to this subscription alone, delivered like any other (enabled or not). */
export const pingSubscription = async (deps: WebhooksDeps, caller: Caller, id: string) => {
  const found = await own(deps, caller, id);
  const now = deps.clock.now().toISOString();
  const event = { id: eventId('ping', deps.uuid()), type: 'ping' as const };
  const json = eventBody({
    type: 'ping',
    timestamp: now,
    data: { webhook_id: found.id, message: 'Ping from the deployment service' },
  });
  const delivery = newDelivery(found, event, json, now);
  await deps.deliveries.create(delivery);
  await deps.queue.send({ kind: 'attempt', delivery_id: delivery.id, attempt: 1, not_before: now });
  return deliveryView(delivery);
};

export const listDeliveries = async (
  deps: Pick<WebhooksDeps, 'subscriptions' | 'deliveries'>,
  caller: Caller,
  id: string,
  page: PageRequest,
) => {
  await own(deps, caller, id);
  return pageOf((await deps.deliveries.listBySubscription(id)).map(deliveryView), page);
};

/**
 * Sends a delivery again: an ended one (delivered, failed, cancelled) becomes pending with a new round of attempts
 * and the same `webhook-id` (a receiver that already handled it may drop it); one still pending or sending is 409.
 */
export const redeliver = async (deps: WebhooksDeps, caller: Caller, id: string, deliveryIdParam: string) => {
  await own(deps, caller, id);
  const found = DELIVERY_ID.test(deliveryIdParam) ? await deps.deliveries.get(deliveryIdParam) : undefined;
  if (found === undefined || found.subscriptionId !== id) throw new NotFoundError('Delivery', deliveryIdParam);
  if (found.state === 'pending' || found.state === 'sending')
    throw new ConflictError('The delivery is still being attempted.', { state: found.state });
  const now = deps.clock.now().toISOString();
  const next: Delivery = {
    ...found,
    state: 'pending',
    maxAttempt: found.attempt + MAX_ATTEMPTS,
    nextAttemptAt: now,
    leaseUntil: null,
    updatedAt: now,
  };
  if (!(await deps.deliveries.reopen(found, next)))
    throw new ConflictError('The delivery changed meanwhile; read it again.');
  await deps.queue.send({ kind: 'attempt', delivery_id: next.id, attempt: next.attempt + 1, not_before: now });
  return deliveryView(next);
};
