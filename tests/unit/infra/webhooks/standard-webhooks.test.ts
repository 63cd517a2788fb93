// The trigger signature check: Standard Webhooks (signed here by the `standardwebhooks` package, as a sender would)
// and GitHub's X-Hub-Signature-256.
import { createHash, createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { standardWebhooks } from '../../../../infra/webhooks/standard-webhooks.js';

const secret = standardWebhooks.newSecret();
const body = '{"ref":"refs/heads/main"}';
const signed = (at: Date, id = 'msg_1', key = secret) => ({
  'webhook-id': id,
  'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
  'webhook-signature': new Webhook(key).sign(id, at, body),
});

describe('standardWebhooks', () => {
  it('makes whsec_ secrets of 32 random bytes', () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(standardWebhooks.newSecret()).not.toBe(secret);
  });

  it('accepts a Standard Webhooks signature and names its delivery id', () => {
    expect(standardWebhooks.verify(secret, body, signed(new Date()))).toEqual({
      kind: 'standard',
      deliveryId: 'msg_1',
    });
  });

  it('refuses another body, another key, a timestamp outside 5 minutes, and odd ids', () => {
    const headers = signed(new Date());
    expect(standardWebhooks.verify(secret, `${body} `, headers).kind).toBe('invalid');
    expect(standardWebhooks.verify(standardWebhooks.newSecret(), body, headers).kind).toBe('invalid');
    expect(standardWebhooks.verify(secret, body, signed(new Date(Date.now() - 6 * 60_000))).kind).toBe('invalid');
    expect(standardWebhooks.verify(secret, body, signed(new Date(Date.now() + 6 * 60_000))).kind).toBe('invalid');
    expect(standardWebhooks.verify(secret, body, signed(new Date(), 'a b')).kind).toBe('invalid');
    expect(standardWebhooks.verify(secret, body, {}).kind).toBe('invalid');
  });

  it('accepts GitHub’s signature keyed by the secret string', () => {
    const github = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    expect(
      standardWebhooks.verify(secret, body, { 'x-hub-signature-256': github, 'x-github-delivery': 'd-1' }),
    ).toEqual({ kind: 'github', deliveryId: `github-sha256:${createHash('sha256').update(body).digest('hex')}` });
    // The replay key is what the signature covers: another X-Hub delivery id does not make it another call.
    expect(
      standardWebhooks.verify(secret, body, { 'x-hub-signature-256': github, 'x-github-delivery': 'd-2' }),
    ).toEqual(standardWebhooks.verify(secret, body, { 'x-hub-signature-256': github, 'x-github-delivery': 'd-1' }));
    expect(
      standardWebhooks.verify(secret, `${body} `, { 'x-hub-signature-256': github, 'x-github-delivery': 'd-1' }).kind,
    ).toBe('invalid');
    expect(standardWebhooks.verify(secret, body, { 'x-hub-signature-256': github }).kind).toBe('invalid');
  });
});
