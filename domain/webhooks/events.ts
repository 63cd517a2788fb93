// The events' deterministic ids, the delivery ids derived from them, and the two body formats (Standard Webhooks
// JSON, a Slack incoming-webhook message). The event types and their permissions are in types.ts, re-exported here.
import { createHash } from 'node:crypto';
import type { EventType, WebhookEvent, WebhookFormat } from './types.js';

export { EVENT_TYPES, SUBSCRIBABLE_TYPES, isSubscribable, type EventType, type SubscribableType } from './types.js';

/** The payload's version: a change that removes or renames a field makes version 2. */
export const PAYLOAD_VERSION = 1;

/**
 * The event id: the type and the record it is about (and what makes it happen once, e.g. a connection), so every
 * emission of the same happening (an SQS redelivery, a Lambda retry, the sweep redoing an outbox entry) has one id.
 */
export const eventId = (type: EventType, ...parts: readonly string[]): string => [type, ...parts].join(':');

/**
 * The delivery id (`msg_` + 32 hex), derived from the subscription and the event: a re-emitted event finds its
 * delivery already there (a conditional put), so it makes no second one. It is the `webhook-id` of every attempt.
 */
export const deliveryId = (subscriptionId: string, event: string): string => {
  const digest = createHash('sha256').update(`${subscriptionId}\n${event}`, 'utf8').digest('hex');
  return `msg_${digest.slice(0, 32)}`;
};

export const DELIVERY_ID = /^msg_[0-9a-f]{32}$/;

/** The Standard Webhooks body: versioned JSON, `data` the record as the API shows it. */
export const eventBody = (event: Pick<WebhookEvent, 'type' | 'timestamp' | 'data'>): string =>
  JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data, version: PAYLOAD_VERSION });

interface Parsed {
  readonly type: EventType;
  readonly timestamp: string;
  readonly data: Record<string, unknown>;
}

const STATE_WORD: Readonly<Record<string, string>> = {
  'deployment.created': 'created',
  'deployment.started': 'started',
  'deployment.succeeded': 'succeeded',
  'deployment.failed': 'failed',
  'deployment.cancelled': 'was cancelled',
  'deployment.rolled_back': 'was rolled back',
};

const EMOJI: Readonly<Record<string, string>> = {
  'deployment.succeeded': ':white_check_mark:',
  'deployment.failed': ':x:',
  'deployment.cancelled': ':no_entry_sign:',
  'deployment.rolled_back': ':leftwards_arrow_with_hook:',
};

/** Slack's mrkdwn treats &, < and > as markup: escaped, so a name cannot make a link or a mention. */
const slackText = (value: unknown): string =>
  String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');

const plainLine = (event: Parsed): string => {
  const d = event.data;
  switch (event.type) {
    case 'pending_request.queued':
      return `Deployment request ${slackText(d['id'])} queued (position ${slackText(d['queue_position'] ?? '?')})`;
    case 'pending_request.dispatched':
      return `Deployment request ${slackText(d['id'])} dispatched as deployment ${slackText(d['deployment_id'])}`;
    case 'target.online':
    case 'target.offline':
      return `Target ${slackText(d['name'])} is ${event.type === 'target.online' ? 'online' : 'offline'}`;
    case 'analysis.completed':
      return `Failure analysis of deployment ${slackText(d['deployment_id'])}: ${slackText(d['summary'])}`;
    case 'ping':
      return 'Ping from the deployment service: this webhook works.';
    default:
      return `${event.type} ${slackText(d['id'])}`;
  }
};

/**
 * A Slack incoming-webhook message: for deployment events the deployment's name, state and a link to it (the
 * public base URL), as `text` (the notification) and blocks; for the others one plain line.
 */
export const slackBody = (eventJson: string, baseUrl: string): string => {
  const event = JSON.parse(eventJson) as Parsed;
  const word = STATE_WORD[event.type];
  if (word === undefined) return JSON.stringify({ text: plainLine(event) });
  const d = event.data;
  const source = d['solution_name'] ?? d['sequence_name'] ?? d['action_name'] ?? 'deployment';
  const name = `${slackText(source)} ${slackText(d['short_id'] ?? d['id'])}`;
  const link = `${baseUrl}/api/v1/deployments/${encodeURIComponent(String(d['id'] ?? ''))}`;
  const text = `${EMOJI[event.type] ?? ':rocket:'} Deployment ${name} ${word} (state: ${slackText(d['state'])})`;
  const details = d['error_message'] ? `\n${slackText(d['error_message'])}` : '';
  return JSON.stringify({
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*<${link}|${name}>* ${word}${details}` } },
      {
        type: 'context',
        elements: [{ type: 'mrkdwn', text: `state: ${slackText(d['state'])} · ${slackText(event.timestamp)}` }],
      },
    ],
  });
};

/** The body a subscription receives for a stored event. */
export const bodyFor = (format: WebhookFormat, eventJson: string, baseUrl: string): string =>
  format === 'slack' ? slackBody(eventJson, baseUrl) : eventJson;
