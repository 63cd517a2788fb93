// WebhookVerifier: Standard Webhooks (the `standardwebhooks` package: HMAC-SHA256 over `id.timestamp.body`, keyed
// by the base64 part of `whsec_...`, timestamps within 5 minutes) and GitHub's `X-Hub-Signature-256` (HMAC-SHA256
// of the body keyed by the secret string as configured in the repository). The replay key is what the signature
// covers: the signed webhook-id for Standard Webhooks; for GitHub the body's SHA-256, since `X-GitHub-Delivery` is
// not signed (a captured body re-sent under a new delivery id is the same call).
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { SignatureCheck, WebhookVerifier } from '../../domain/triggers/ports.js';

const SECRET_BYTES = 32;
const DELIVERY_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

const githubSignature = (secret: string, body: string, header: string): boolean => {
  const match = /^sha256=([0-9a-f]{64})$/i.exec(header.trim());
  if (match === null) return false;
  const expected = createHmac('sha256', secret).update(body, 'utf8').digest();
  return timingSafeEqual(expected, Buffer.from(match[1]!, 'hex'));
};

export const standardWebhooks: WebhookVerifier = {
  newSecret: () => `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`,

  verify(secret, body, headers): SignatureCheck {
    const id = headers['webhook-id'];
    if (id !== undefined) {
      if (!DELIVERY_ID.test(id)) return { kind: 'invalid', reason: 'webhook-id is not a valid id' };
      try {
        new Webhook(secret).verify(body, {
          'webhook-id': id,
          'webhook-timestamp': headers['webhook-timestamp'] ?? '',
          'webhook-signature': headers['webhook-signature'] ?? '',
        });
        return { kind: 'standard', deliveryId: id };
      } catch {
        return { kind: 'invalid', reason: 'the Standard Webhooks signature or timestamp does not hold' };
      }
    }
    const github = headers['x-hub-signature-256'];
    const delivery = headers['x-github-delivery'];
    if (github !== undefined && delivery !== undefined && DELIVERY_ID.test(delivery))
      return githubSignature(secret, body, github)
        ? { kind: 'github', deliveryId: `github-sha256:${createHash('sha256').update(body, 'utf8').digest('hex')}` }
        : { kind: 'invalid', reason: 'X-Hub-Signature-256 does not hold' };
    return { kind: 'invalid', reason: 'no signature headers' };
  },
};
