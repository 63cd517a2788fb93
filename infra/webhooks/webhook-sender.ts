// WebhookSender and WebhookSigner: one signed POST to a receiver through the SSRF guard (infra/net: resolved
// addresses checked at connection time, no private, loopback, link-local or metadata address unless the host is
// allowed by configuration), a 10 s deadline, redirects not followed (a 3xx is a failed attempt), the answer read up
// to 64 KiB. Signatures per Standard Webhooks, by the `standardwebhooks` package.
import { Webhook } from 'standardwebhooks';
import type { SendResult, WebhookSender, WebhookSigner } from '../../domain/webhooks/ports.js';
import { urlProblem } from '../net/address-policy.js';
import { guardedFetch, OutboundRequestError, savedUrlProblem, type FetchPolicy } from '../net/guarded-fetch.js';
import { standardWebhooks } from './standard-webhooks.js';

export const WEBHOOK_TIMEOUT_MS = 10_000;
export const WEBHOOK_MAX_ANSWER_BYTES = 64 * 1024;
const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]', '::1'];

/** The hosts exempt from the address check: WEBHOOK_ALLOWED_HOSTS, and loopback when WEBHOOK_ALLOW_LOOPBACK. */
export const webhookAllowedHosts = (allowed: readonly string[], loopback: boolean): readonly string[] => [
  ...allowed,
  ...(loopback ? LOOPBACK_HOSTS : []),
];

export const webhookSender = (
  allowedHosts: readonly string[],
  options: { readonly timeoutMs?: number; readonly now?: () => number } = {},
): WebhookSender => {
  const policy: FetchPolicy = {
    allowedHosts,
    timeoutMs: options.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
    maxBytes: WEBHOOK_MAX_ANSWER_BYTES,
    maxRedirects: 0,
    truncateBody: true,
    userAgent: 'deployer-webhooks/1',
  };
  const now = options.now ?? (() => performance.now());
  return {
    urlProblem: (raw) => urlProblem(allowedHosts, raw),

    // Not resolving now is no proof of anything: each delivery is checked as it connects.
    resolveProblem: (raw) => savedUrlProblem(allowedHosts, raw),

    async post(url, headers, body): Promise<SendResult> {
      const started = now();
      try {
        const response = await guardedFetch(policy, url, { method: 'POST', headers, body });
        return {
          statusCode: response.status,
          durationMs: Math.round(now() - started),
          body: response.body,
          error: null,
        };
      } catch (error) {
        const message =
          error instanceof OutboundRequestError
            ? error.message.replace('The provider', 'The receiver')
            : 'The receiver could not be reached.';
        return { statusCode: null, durationMs: Math.round(now() - started), body: '', error: message };
      }
    },
  };
};

export const standardWebhookSigner: WebhookSigner = {
  newSecret: standardWebhooks.newSecret,
  sign(secret, id, at, body) {
    return {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, at, body),
    };
  },
};
