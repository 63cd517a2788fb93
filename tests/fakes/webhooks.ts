// In-memory adapters of the webhooks context (domain/webhooks/ports.ts), with the same conditions as DynamoDB's.
import type {
  DeliveryRepository,
  SendResult,
  SubscriptionRepository,
  WebhookMessage,
  WebhookQueue,
  WebhookSender,
} from '../../domain/webhooks/ports.js';
import type { Delivery, Subscription, SubscriptionChanges } from '../../domain/webhooks/types.js';

export class FakeSubscriptions implements SubscriptionRepository {
  readonly items = new Map<string, Subscription>();
  reads = 0;
  async create(s: Subscription) {
    this.items.set(s.id, s);
  }
  async get(id: string) {
    return this.items.get(id);
  }
  async listByTenant(tenantId: string | null) {
    this.reads += 1;
    return [...this.items.values()].filter((s) => s.tenantId === tenantId);
  }
  async update(s: Subscription, changes: SubscriptionChanges, at: string) {
    const current = this.items.get(s.id);
    if (current === undefined || current.revision !== s.revision) return undefined;
    const defined = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
    const next = { ...current, ...defined, updatedAt: at, revision: current.revision + 1 };
    this.items.set(s.id, next);
    return next;
  }
  async delete(id: string) {
    this.items.delete(id);
  }
  async countFailure(id: string) {
    const s = this.items.get(id);
    if (s === undefined) return undefined;
    this.items.set(id, { ...s, consecutiveFailures: s.consecutiveFailures + 1 });
    return s.consecutiveFailures + 1;
  }
  async clearFailures(id: string) {
    const s = this.items.get(id);
    if (s !== undefined) this.items.set(id, { ...s, consecutiveFailures: 0 });
  }
  async disable(id: string, reason: string, at: string) {
    const s = this.items.get(id);
    if (s?.enabled === true) this.items.set(id, { ...s, enabled: false, disabledReason: reason, disabledAt: at });
  }
}

export class FakeDeliveries implements DeliveryRepository {
  readonly items = new Map<string, Delivery>();
  async create(d: Delivery) {
    if (this.items.has(d.id)) return false;
    this.items.set(d.id, d);
    return true;
  }
  async get(id: string) {
    return this.items.get(id);
  }
  async listBySubscription(id: string) {
    return [...this.items.values()].filter((d) => d.subscriptionId === id).reverse();
  }
  async claim(d: Delivery, attempt: number, leaseUntil: string, at: string) {
    const c = this.items.get(d.id);
    const free =
      c !== undefined &&
      ((c.state === 'pending' && c.attempt === attempt - 1) ||
        (c.state === 'sending' && c.attempt === attempt && (c.leaseUntil ?? '') < at));
    if (!free) return false;
    this.items.set(d.id, { ...c, state: 'sending', attempt, leaseUntil, updatedAt: at });
    return true;
  }
  private write(expected: Delivery, next: Delivery, states: readonly string[]) {
    const c = this.items.get(expected.id);
    if (c === undefined || c.attempt !== expected.attempt || !states.includes(c.state)) return false;
    this.items.set(expected.id, next);
    return true;
  }
  async record(d: Delivery, next: Delivery) {
    return this.write(d, next, ['sending']);
  }
  async reopen(d: Delivery, next: Delivery) {
    return this.write(d, next, ['delivered', 'failed', 'cancelled']);
  }
}

export class FakeWebhookQueue implements WebhookQueue {
  readonly sent: { message: WebhookMessage; delaySeconds: number }[] = [];
  async send(message: WebhookMessage, delaySeconds = 0) {
    this.sent.push({ message, delaySeconds });
  }
  take() {
    return this.sent.splice(0);
  }
}

/** A receiver that answers from a script of results, and records what it was sent. */
export class ScriptedSender implements WebhookSender {
  readonly calls: { url: string; headers: Readonly<Record<string, string>>; body: string }[] = [];
  constructor(private readonly answers: (call: number) => SendResult) {}
  urlProblem() {
    return undefined;
  }
  async resolveProblem() {
    return undefined;
  }
  async post(url: string, headers: Readonly<Record<string, string>>, body: string) {
    this.calls.push({ url, headers, body });
    return this.answers(this.calls.length);
  }
}

export const answer = (statusCode: number, body = ''): SendResult => ({ statusCode, durationMs: 5, body, error: null });
