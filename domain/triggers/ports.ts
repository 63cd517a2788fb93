// Ports of the triggers context. Adapters: infra/dynamodb/trigger-repository.ts, infra/webhooks/standard-webhooks.ts.
import type { Trigger, TriggerChanges } from './types.js';

export interface TriggerRepository {
  create(trigger: Trigger): Promise<void>;
  /** By id or short id. */
  get(id: string): Promise<Trigger | undefined>;
  /** One owner's triggers, oldest first. */
  listByOwner(ownerId: string): Promise<readonly Trigger[]>;
  /** Writes the changes if the trigger is still at its revision; the updated trigger, or undefined. */
  update(trigger: Trigger, changes: TriggerChanges, at: string): Promise<Trigger | undefined>;
  delete(id: string): Promise<void>;
  /** Records a call's time: a plain write, not a revision (an owner's edit in flight is not turned into a 409). */
  markTriggered(id: string, at: string): Promise<void>;
  /** Records a delivery id; false when it was seen in the last `ttlSeconds` (a replay). */
  claimDelivery(triggerId: string, deliveryId: string, ttlSeconds: number): Promise<boolean>;
  /** Forgets a delivery id whose call failed, so the sender may retry it. */
  releaseDelivery(triggerId: string, deliveryId: string): Promise<void>;
}

/**
 * What signed the call, when the signature holds. `deliveryId` is the replay key, built only from what the signature
 * covers: the signed webhook-id (Standard Webhooks), or `github-sha256:<hex>` of the body (GitHub signs nothing else).
 */
export type SignatureCheck =
  | { readonly kind: 'standard'; readonly deliveryId: string }
  | { readonly kind: 'github'; readonly deliveryId: string }
  | { readonly kind: 'invalid'; readonly reason: string };

/** Standard Webhooks (HMAC-SHA256 over `id.timestamp.body`, 5-minute tolerance) or GitHub's X-Hub-Signature-256. */
export interface WebhookVerifier {
  newSecret(): string;
  verify(secret: string, body: string, headers: Readonly<Record<string, string | undefined>>): SignatureCheck;
}
