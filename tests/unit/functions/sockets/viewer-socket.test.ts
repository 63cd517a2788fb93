// The viewer channel's message handler through makeHandler with fakes: a message is parsed with its schema and
// dispatched; every refusal (not JSON, an unknown action, a bad field, a domain error) is an `error` message in the
// API's envelope with the message's ref, and the connection stays open; an unknown connection is told and closed;
// without the channel the answer is 503.
import { describe, expect, it } from 'vitest';
import type { ViewerSubscribeDeps } from '../../../../domain/streams/viewer-channel.js';
import type { ViewerResourceDeps } from '../../../../domain/streams/viewer-resources.js';
import { makeHandler } from '../../../../functions/sockets/viewer-socket.js';
import { FakeClock } from '../../../fakes/clock.js';
import { aDeployment, FakeDeploymentRepository } from '../../../fakes/deployments.js';
import { aViewer, FakeViewerPush, FakeViewerRegistry } from '../../../fakes/viewers.js';
import { FakeDeploymentEventStore } from '../streams/fake-event-store.js';

const setup = async () => {
  const registry = new FakeViewerRegistry();
  const push = new FakeViewerPush();
  const deployments = new FakeDeploymentRepository();
  deployments.put(aDeployment({ tenantId: 't-2' }));
  await registry.connect(aViewer());
  const deps: ViewerSubscribeDeps = {
    registry,
    push,
    clock: new FakeClock(new Date('2026-01-01T00:30:00.000Z')),
    connectionsPerUser: 10,
    warn: () => undefined,
    auth: {
      verify: () => Promise.reject(new Error('not used')),
      stillValid: async () => true,
      apiKeyExpiry: async () => null,
    },
    deployments,
    events: new FakeDeploymentEventStore(),
    resources: {} as ViewerResourceDeps, // no resource topic in these tests
    wait: async () => undefined,
  };
  const handler = makeHandler(
    () => deps,
    () => [],
  );
  const send = (body: unknown, connectionId = 'conn-1') =>
    handler({
      requestContext: { routeKey: 'subscribe', connectionId, requestId: 'req-1' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      isBase64Encoded: false,
    } as unknown as Parameters<typeof handler>[0]);
  return { deps, registry, push, send };
};

describe('viewerSocket', () => {
  it('subscribes with the topic echoed as sent (last_event_id defaulted) and answers a ping', async () => {
    // Arrange
    const { push, send, registry } = await setup();
    // Act
    const answer = await send({ action: 'subscribe', ref: 'a', topic: 'deployment', deployment_id: 'd1' });
    await send({ action: 'ping' });
    // Assess
    expect(answer).toEqual({ statusCode: 200 });
    expect(push.to('conn-1')).toEqual([
      { type: 'subscribed', ref: 'a', topic: { topic: 'deployment', deployment_id: 'd1', last_event_id: 0 } },
      { type: 'pong' },
    ]);
    expect(registry.topicsOf('conn-1')).toEqual([`deployment#${aDeployment().id}`]);
  });

  it('answers malformed messages and domain refusals with error messages, and stays open', async () => {
    // Arrange
    const { push, send } = await setup();
    // Act
    await send('{not json');
    await send({ action: 'subscribe', ref: 'b', topic: 'deployment', last_event_id: -1 });
    await send({ action: 'subscribe', ref: 'c', topic: 'resources', resource_type: 'users' });
    await send({ action: 'unsubscribe', ref: 'd', topic: 'nothing' });
    // Assess
    const errors = push.to('conn-1');
    expect(errors.map((m) => (m.type === 'error' ? [m.ref, m.error.code] : m.type))).toEqual([
      [undefined, 'VALIDATION_ERROR'],
      ['b', 'VALIDATION_ERROR'],
      ['c', 'VALIDATION_ERROR'],
      ['d', 'VALIDATION_ERROR'],
    ]);
    expect(errors[1]).toMatchObject({
      error: { details: { fields: expect.arrayContaining([expect.objectContaining({ field: 'deployment_id' })]) } },
    });
    expect(push.closed).toEqual([]);
  });

  it('answers NOT_FOUND for another tenant deployment, and tells and closes an unknown connection', async () => {
    // Arrange
    const { push, send, registry } = await setup();
    await registry.connect(aViewer({ connectionId: 'tenant', tenantId: 't-1' }));
    // Act
    await send({ action: 'subscribe', ref: 'e', topic: 'deployment', deployment_id: 'd1' }, 'tenant');
    await send({ action: 'unsubscribe', ref: 'f', topic: 'deployment', deployment_id: 'd1' }, 'ghost');
    // Assess
    expect(push.to('tenant')).toEqual([
      { type: 'error', ref: 'e', error: expect.objectContaining({ code: 'NOT_FOUND' }) },
    ]);
    expect(push.to('ghost')).toEqual([
      { type: 'error', ref: 'f', error: expect.objectContaining({ code: 'INVALID_TOKEN' }) },
    ]);
    expect(push.closed).toEqual(['ghost']);
  });

  it('answers 503 without the channel', async () => {
    // Arrange
    const handler = makeHandler(
      () => undefined,
      () => [],
    );
    // Act
    const answer = await handler({
      requestContext: { routeKey: 'ping', connectionId: 'c' },
      body: '{"action":"ping"}',
    } as unknown as Parameters<typeof handler>[0]);
    // Assess
    expect(answer).toEqual({ statusCode: 503 });
  });
});
