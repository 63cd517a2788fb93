import { describe, expect, it } from 'vitest';
import {
  bodyFor,
  DELIVERY_ID,
  deliveryId,
  EVENT_TYPES,
  eventBody,
  eventId,
  slackBody,
} from '../../../../domain/webhooks/events.js';

const deployment = {
  id: '0b7c6a8e-6a57-4f0e-9f3e-4d2b8c1a9e11',
  short_id: 'k3G7QA',
  action_name: 'Release <script>',
  state: 'failed',
  error_message: '1 step(s) failed.',
};

describe('webhook events', () => {
  it('names every event of the issue, each with the read permission of its resource', () => {
    expect(EVENT_TYPES).toEqual({
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
    });
  });

  it('gives an event a deterministic id, and a delivery an id derived from (subscription, event)', () => {
    // Act
    const id = eventId('deployment.started', deployment.id);
    const first = deliveryId('sub-1', id);

    // Assess
    expect(id).toBe(`deployment.started:${deployment.id}`);
    expect(first).toMatch(DELIVERY_ID);
    expect(deliveryId('sub-1', id)).toBe(first);
    expect(deliveryId('sub-2', id)).not.toBe(first);
    expect(deliveryId('sub-1', eventId('deployment.failed', deployment.id))).not.toBe(first);
  });

  it('writes the versioned Standard Webhooks body', () => {
    const body = eventBody({ type: 'deployment.failed', timestamp: '2026-01-01T00:00:00.000Z', data: deployment });
    expect(JSON.parse(body)).toEqual({
      type: 'deployment.failed',
      timestamp: '2026-01-01T00:00:00.000Z',
      data: deployment,
      version: 1,
    });
    expect(bodyFor('standard', body, 'https://deploy.example.com')).toBe(body);
  });

  it('writes a Slack message with the deployment’s name, state and a link, markup escaped', () => {
    // Prepare
    const body = eventBody({ type: 'deployment.failed', timestamp: '2026-01-01T00:00:00.000Z', data: deployment });

    // Act
    const slack = JSON.parse(slackBody(body, 'https://deploy.example.com')) as {
      text: string;
      blocks: { text?: { text: string } }[];
    };

    // Assess
    expect(slack.text).toBe(':x: Deployment Release &lt;script&gt; k3G7QA failed (state: failed)');
    expect(slack.blocks[0]?.text?.text).toContain(`<https://deploy.example.com/api/v1/deployments/${deployment.id}|`);
    expect(JSON.stringify(slack)).not.toContain('<script>');
  });

  it('writes one plain line for the other events', () => {
    const body = eventBody({ type: 'target.offline', timestamp: 't', data: { name: 'web-1' } });
    expect(JSON.parse(slackBody(body, 'https://x'))).toEqual({ text: 'Target web-1 is offline' });
  });
});
