// handlers -> domain/webhooks/subscriptions.ts -> SubscriptionRepository, DeliveryRepository, WebhookQueue: the
// outgoing webhooks of the caller's tenant (decisions.md, "Webhooks (issue 18, outbound)"). tenants:read views,
// tenants:update manages; every event type subscribed to also needs its resource's read permission. The secret is
// shown only by create and rotate-secret; the URL whole only to tenants:update holders (else `https://host/…`).
import * as v from 'valibot';
import { SUBSCRIBABLE_TYPES } from '../../../domain/webhooks/events.js';
import {
  createSubscription,
  deleteSubscription,
  getSubscription,
  listDeliveries,
  listSubscriptions,
  pingSubscription,
  redeliver,
  rotateSubscriptionSecret,
  updateSubscription,
  type WebhooksDeps,
} from '../../../domain/webhooks/subscriptions.js';
import { http } from '../../shared/http.js';
import { PageQuery, Paginated, PathId } from '../../shared/schemas.js';
import { webhooksDeps } from '../../shared/webhooks-wiring.js';

const Url = v.pipe(
  v.string(),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(2000),
  v.url('must be a URL'),
);
const EventTypes = v.pipe(
  v.array(v.picklist(SUBSCRIBABLE_TYPES, `must be one of ${SUBSCRIBABLE_TYPES.join(', ')}`)),
  v.minLength(1, 'must name at least one event type'),
  v.maxLength(SUBSCRIBABLE_TYPES.length * 2),
);
const CreateBody = v.object({
  url: Url,
  description: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(1000)))),
  event_types: EventTypes,
  format: v.optional(v.picklist(['standard', 'slack'])),
  enabled: v.optional(v.boolean()),
});
const UpdateBody = v.partial(CreateBody);

const SubscriptionSchema = v.object({
  id: v.string(),
  tenant_id: v.nullable(v.string()),
  url: v.pipe(
    v.string(),
    v.description('The whole URL for callers holding tenants:update; else only its scheme and host: `https://host/…`'),
  ),
  description: v.nullable(v.string()),
  event_types: v.array(v.string()),
  format: v.picklist(['standard', 'slack']),
  enabled: v.boolean(),
  disabled_reason: v.nullable(v.string()),
  disabled_at: v.nullable(v.string()),
  consecutive_failures: v.number(),
  created_by: v.string(),
  created_at: v.string(),
  updated_at: v.string(),
});

const DeliverySchema = v.object({
  id: v.string(),
  subscription_id: v.string(),
  event_id: v.string(),
  event_type: v.string(),
  state: v.picklist(['pending', 'sending', 'delivered', 'failed', 'cancelled']),
  attempt: v.number(),
  status_code: v.nullable(v.number()),
  duration_ms: v.nullable(v.number()),
  response_excerpt: v.nullable(v.string()),
  error: v.nullable(v.string()),
  next_attempt_at: v.nullable(v.string()),
  attempts: v.array(
    v.object({
      attempt: v.number(),
      at: v.string(),
      status_code: v.nullable(v.number()),
      duration_ms: v.number(),
      error: v.nullable(v.string()),
    }),
  ),
  created_at: v.string(),
  updated_at: v.string(),
});

const DeliveryPath = v.object({
  id: PathId.entries.id,
  delivery_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
});

const TAGS = ['webhooks'];
const NOT_FOUND = { description: 'NOT_FOUND: no such webhook in the caller’s tenant' };

export const list = (deps: () => WebhooksDeps) =>
  http(
    {
      operationId: 'list_webhooks',
      summary: 'The webhooks of the caller’s tenant, oldest first (URLs as scheme and host without tenants:update)',
      tags: TAGS,
      permission: 'tenants:read',
      query: PageQuery(),
      responses: { 200: { description: 'A page of webhooks', schema: Paginated(SubscriptionSchema) } },
    },
    async ({ caller, query }) => ({ statusCode: 200, body: await listSubscriptions(deps(), caller, query) }),
  );

export const create = (deps: () => WebhooksDeps) =>
  http(
    {
      operationId: 'create_webhook',
      summary: 'Subscribe a URL to events; its signing secret (whsec_...) is shown only in this answer',
      tags: TAGS,
      permission: 'tenants:update',
      body: CreateBody,
      responses: {
        201: {
          description: 'The webhook and its secret',
          schema: v.object({ ...SubscriptionSchema.entries, secret: v.string() }),
        },
        400: { description: 'VALIDATION_ERROR (an http or internal URL, an unknown event type)' },
        403: { description: 'INSUFFICIENT_PERMISSIONS: an event type whose resource the caller cannot read' },
        409: { description: 'CONFLICT: 20 webhooks already' },
      },
    },
    async ({ caller, body }) => ({ statusCode: 201, body: await createSubscription(deps(), caller, body) }),
  );

export const get = (deps: () => WebhooksDeps) =>
  http(
    {
      operationId: 'get_webhook',
      summary: 'One webhook (never its secret; its URL as scheme and host without tenants:update)',
      tags: TAGS,
      permission: 'tenants:read',
      params: PathId,
      responses: { 200: { description: 'The webhook', schema: SubscriptionSchema }, 404: NOT_FOUND },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await getSubscription(deps(), caller, params.id) }),
  );

export const update = (deps: () => WebhooksDeps) =>
  http(
    {
      operationId: 'update_webhook',
      summary: 'Change a webhook: url, description, event types, format, enabled (enabling clears disabled_reason)',
      tags: TAGS,
      permission: 'tenants:update',
      params: PathId,
      body: UpdateBody,
      responses: {
        200: { description: 'The webhook', schema: SubscriptionSchema },
        400: { description: 'VALIDATION_ERROR' },
        403: { description: 'INSUFFICIENT_PERMISSIONS' },
        404: NOT_FOUND,
        409: { description: 'CONFLICT: changed meanwhile' },
      },
    },
    async ({ caller, params, body }) => ({
      statusCode: 200,
      body: await updateSubscription(deps(), caller, params.id, body),
    }),
  );

export const remove = (deps: () => WebhooksDeps) =>
  http(
    {
      operationId: 'delete_webhook',
      summary: 'Delete a webhook: deliveries still waiting are cancelled',
      tags: TAGS,
      permission: 'tenants:update',
      params: PathId,
      responses: { 204: { description: 'Deleted' }, 404: NOT_FOUND },
    },
    async ({ caller, params }) => {
      await deleteSubscription(deps(), caller, params.id);
      return { statusCode: 204 };
    },
  );

export const rotate = (deps: () => WebhooksDeps) =>
  http(
    {
      operationId: 'rotate_webhook_secret',
      summary: 'A new signing secret, shown once; every delivery from now on is signed with it',
      tags: TAGS,
      permission: 'tenants:update',
      params: PathId,
      responses: {
        200: { description: 'The new secret', schema: v.object({ id: v.string(), secret: v.string() }) },
        404: NOT_FOUND,
        409: { description: 'CONFLICT: changed meanwhile' },
      },
    },
    async ({ caller, params }) => ({
      statusCode: 200,
      body: await rotateSubscriptionSecret(deps(), caller, params.id),
    }),
  );

export const test = (deps: () => WebhooksDeps) =>
  http(
    {
      operationId: 'test_webhook',
      summary: 'Send a ping event to this webhook (queued; its delivery shows in the log)',
      tags: TAGS,
      permission: 'tenants:update',
      params: PathId,
      responses: { 202: { description: 'The ping’s delivery, pending', schema: DeliverySchema }, 404: NOT_FOUND },
    },
    async ({ caller, params }) => ({ statusCode: 202, body: await pingSubscription(deps(), caller, params.id) }),
  );

export const deliveries = (deps: () => WebhooksDeps) =>
  http(
    {
      operationId: 'list_webhook_deliveries',
      summary: 'The delivery log of a webhook (7 days), newest first',
      tags: TAGS,
      permission: 'tenants:read',
      params: PathId,
      query: PageQuery(),
      responses: { 200: { description: 'A page of deliveries', schema: Paginated(DeliverySchema) }, 404: NOT_FOUND },
    },
    async ({ caller, params, query }) => ({
      statusCode: 200,
      body: await listDeliveries(deps(), caller, params.id, query),
    }),
  );

export const redeliverOne = (deps: () => WebhooksDeps) =>
  http(
    {
      operationId: 'redeliver_webhook_delivery',
      summary: 'Send an ended delivery again (same webhook-id, a new round of attempts)',
      tags: TAGS,
      permission: 'tenants:update',
      params: DeliveryPath,
      responses: {
        202: { description: 'The delivery, pending again', schema: DeliverySchema },
        404: { description: 'NOT_FOUND: no such webhook or delivery' },
        409: { description: 'CONFLICT: the delivery is still being attempted' },
      },
    },
    async ({ caller, params }) => ({
      statusCode: 202,
      body: await redeliver(deps(), caller, params.id, params.delivery_id),
    }),
  );

export const handlers = {
  list: list(webhooksDeps),
  create: create(webhooksDeps),
  get: get(webhooksDeps),
  update: update(webhooksDeps),
  remove: remove(webhooksDeps),
  rotate: rotate(webhooksDeps),
  test: test(webhooksDeps),
  deliveries: deliveries(webhooksDeps),
  redeliver: redeliverOne(webhooksDeps),
};
