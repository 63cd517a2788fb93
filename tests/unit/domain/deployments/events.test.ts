import { describe, expect, it } from 'vitest';
import {
  boundedEvent,
  contiguousAfter,
  isTerminalEvent,
  MAX_EVENT_TEXT,
  streamMessage,
  type DeploymentEvent,
  type StoredEvent,
} from '../../../../domain/deployments/events.js';
import { deploymentLogHistory, historyEntry, offsetTime } from '../../../../domain/deployments/log-history.js';
import type { Caller } from '../../../../domain/identity/types.js';
import type { Permission } from '../../../../domain/identity/permissions.js';
import { aDeployment, FakeDeploymentRepository } from '../../../fakes/deployments.js';
import { FakeClock } from '../../../fakes/clock.js';
import { FakeDeploymentEventStore } from '../../functions/streams/fake-event-store.js';

const caller = (tenantId: string | null = null): Caller => ({
  kind: 'user',
  userId: 'u1',
  tenantId,
  roles: ['admin'],
  permissions: new Set<Permission>(['deployments:read']),
});
const deployment = aDeployment();
const step = deployment.plan.steps[0]!;
const AT = '2026-11-22T10:00:01.250Z';

const log = (message: string, stream?: 'stdout' | 'stderr'): DeploymentEvent => ({
  type: 'log',
  log: {
    timestamp: AT,
    level: stream === 'stderr' ? 'error' : 'info',
    step_id: step.id,
    target_id: step.targetId,
    target_name: 'web-1',
    message,
    metadata: stream === undefined ? null : { stream },
  },
});
const stateChange = (
  new_state: 'running' | 'success' | 'failed' | 'cancelled' | 'rolled_back' | 'rolling_back',
): DeploymentEvent => ({
  type: 'state_change',
  deployment_id: deployment.id,
  old_state: 'running',
  new_state,
  message: `now ${new_state}`,
});
const stored = (seq: number, event: DeploymentEvent): StoredEvent => ({ seq, at: AT, event });

describe('stream framing', () => {
  it('wraps each event as {event, data} with data.type equal to event', () => {
    for (const event of [log('hi'), stateChange('success')]) {
      const message = streamMessage(event);
      expect(message.event).toBe(event.type);
      expect(message.data.type).toBe(message.event);
    }
    expect(streamMessage(log('hi'))).toEqual({
      event: 'log',
      data: { type: 'log', log: expect.objectContaining({ message: 'hi', level: 'info' }) },
    });
  });

  it('shows a log member’s timestamp in the spec’s +00:00 form, whatever the stored form', () => {
    const message = streamMessage(log('hi'));
    expect(message.data).toMatchObject({ log: { timestamp: '2026-11-22T10:00:01.250+00:00' } });
    expect(log('hi')).toMatchObject({ log: { timestamp: AT } });
  });

  it('treats only a state_change to success, failed, cancelled or rolled_back as the end', () => {
    expect(
      ['success', 'failed', 'cancelled', 'rolled_back'].map((s) => isTerminalEvent(stateChange(s as 'success'))),
    ).toEqual([true, true, true, true]);
    expect(isTerminalEvent(stateChange('running'))).toBe(false);
    expect(isTerminalEvent(stateChange('rolling_back'))).toBe(false);
    expect(isTerminalEvent(log('success'))).toBe(false);
  });
});

describe('boundedEvent', () => {
  it('keeps the start of a long message and the end of a long output', () => {
    const long = `START${'x'.repeat(MAX_EVENT_TEXT * 2)}END`;
    const message = boundedEvent(log(long));
    const output = boundedEvent({
      type: 'step_update',
      step_id: 's',
      state: 'failed',
      exit_code: 1,
      error_message: null,
      output: long,
    });
    expect(
      message.type === 'log' && [message.log.message.length <= MAX_EVENT_TEXT, message.log.message.startsWith('START')],
    ).toEqual([true, true]);
    expect(
      output.type === 'step_update' && [output.output!.length <= MAX_EVENT_TEXT, output.output!.endsWith('END')],
    ).toEqual([true, true]);
    expect(boundedEvent(log('short'))).toEqual(log('short'));
  });
});

describe('contiguousAfter', () => {
  it('stops at the first gap', () => {
    expect(
      contiguousAfter(2, [stored(3, log('a')), stored(4, log('b')), stored(6, log('c'))]).map((e) => e.seq),
    ).toEqual([3, 4]);
    expect(contiguousAfter(2, [stored(4, log('b'))])).toEqual([]);
  });
});

describe('history entries', () => {
  it('writes timestamps with a +00:00 offset', () => {
    expect(offsetTime('2026-11-22T10:00:01.250Z')).toBe('2026-11-22T10:00:01.250+00:00');
  });

  it('maps a log line: its own fields, stdout or stderr by its stream', () => {
    expect(historyEntry(deployment, stored(1, log('oops', 'stderr')))).toEqual({
      id: `${deployment.id}:1`,
      seq: 1,
      timestamp: '2026-11-22T10:00:01.250+00:00',
      level: 'error',
      event_type: 'log',
      step_id: step.id,
      target_id: step.targetId,
      target_name: 'web-1',
      message: 'oops',
      stdout: null,
      stderr: 'oops',
      metadata: { stream: 'stderr' },
      analysis: null,
    });
    expect(historyEntry(deployment, stored(2, log('fine', 'stdout')))).toMatchObject({
      stdout: 'fine',
      stderr: null,
      level: 'info',
    });
  });

  it('maps a step_update: a message naming the action and target, the output as stdout, errors at level error', () => {
    const entry = historyEntry(
      deployment,
      stored(3, {
        type: 'step_update',
        step_id: step.id,
        state: 'failed',
        exit_code: 2,
        error_message: 'boom',
        output: 'last lines',
      }),
    );
    expect(entry).toMatchObject({
      level: 'error',
      event_type: 'step_update',
      step_id: step.id,
      target_id: step.targetId,
      target_name: 'web-1',
      message: 'Step restart-web on web-1 failed (exit code 2): boom',
      stdout: 'last lines',
      stderr: null,
      metadata: { state: 'failed', exit_code: 2, error_message: 'boom' },
    });
  });

  it('maps state_change and progress to their message, with the states or counts as metadata', () => {
    expect(historyEntry(deployment, stored(4, stateChange('failed')))).toMatchObject({
      level: 'error',
      event_type: 'state_change',
      message: 'now failed',
      step_id: null,
      metadata: { old_state: 'running', new_state: 'failed' },
    });
    expect(historyEntry(deployment, stored(5, stateChange('cancelled')))).toMatchObject({ level: 'warn' });
    expect(
      historyEntry(
        deployment,
        stored(6, {
          type: 'progress',
          deployment_id: deployment.id,
          progress: 0.5,
          completed_steps: 1,
          total_steps: 2,
          message: '1 of 2',
        }),
      ),
    ).toMatchObject({
      level: 'info',
      event_type: 'progress',
      message: '1 of 2',
      metadata: { progress: 0.5, completed_steps: 1, total_steps: 2 },
    });
  });
});

describe('deploymentLogHistory', () => {
  const setup = async (d = deployment, count = 5) => {
    const deployments = new FakeDeploymentRepository();
    deployments.put(d);
    const events = new FakeDeploymentEventStore();
    await events.append(
      d.id,
      Array.from({ length: count }, (_, i) => ({ at: AT, event: log(`line ${i + 1}`) })),
    );
    return { deployments, events, clock: new FakeClock(new Date('2026-11-22T11:00:00.000Z')) };
  };

  it('pages by offset and limit, oldest first, by id or short id', async () => {
    const deps = await setup();
    expect(
      (await deploymentLogHistory(deps, caller(), deployment.id, { offset: 0, limit: 100 })).map((e) => e.message),
    ).toEqual(['line 1', 'line 2', 'line 3', 'line 4', 'line 5']);
    expect(
      (await deploymentLogHistory(deps, caller(), deployment.shortId, { offset: 1, limit: 2 })).map((e) => e.seq),
    ).toEqual([2, 3]);
    expect(await deploymentLogHistory(deps, caller(), deployment.id, { offset: 5, limit: 100 })).toEqual([]);
  });

  it('ends a finished deployment without a stored terminal state_change with one built from its record and stored once, on the last page only', async () => {
    const cancelled = aDeployment({
      state: 'cancelled',
      completedAt: '2026-11-22T10:05:00.000Z',
      errorMessage: 'Cancelled by a user.',
    });
    const deps = await setup(cancelled, 3);
    const all = await deploymentLogHistory(deps, caller(), cancelled.id, { offset: 0, limit: 100 });
    expect(all.map((e) => [e.seq, e.event_type])).toEqual([
      [1, 'log'],
      [2, 'log'],
      [3, 'log'],
      [4, 'state_change'],
    ]);
    expect(all[3]).toMatchObject({
      message: 'Cancelled by a user.',
      timestamp: '2026-11-22T10:05:00.000+00:00',
      metadata: { new_state: 'cancelled' },
    });
    expect(
      (await deploymentLogHistory(deps, caller(), cancelled.id, { offset: 0, limit: 3 })).map((e) => e.seq),
    ).toEqual([1, 2, 3]);
    expect(
      (await deploymentLogHistory(deps, caller(), cancelled.id, { offset: 3, limit: 3 })).map((e) => e.seq),
    ).toEqual([4]);
    expect(await deploymentLogHistory(deps, caller(), cancelled.id, { offset: 4, limit: 3 })).toEqual([]);
    // it was appended once (keyed), not made up on each read
    expect(deps.events.events.get(cancelled.id)?.map((e) => e.event.type)).toEqual([
      'log',
      'log',
      'log',
      'state_change',
    ]);
  });

  it('answers 404 for a missing deployment and for another tenant’s', async () => {
    const deps = await setup(aDeployment({ tenantId: 'tenant-a' }));
    await expect(
      deploymentLogHistory(deps, caller('tenant-b'), deployment.id, { offset: 0, limit: 10 }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(deploymentLogHistory(deps, caller(), 'nope', { offset: 0, limit: 10 })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await expect(
      deploymentLogHistory(deps, caller('tenant-a'), deployment.id, { offset: 0, limit: 10 }),
    ).resolves.toHaveLength(5);
  });
});
