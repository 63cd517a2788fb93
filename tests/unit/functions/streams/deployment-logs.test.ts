import { describe, expect, it } from 'vitest';
import { stateEventKey, type DeploymentEvent } from '../../../../domain/deployments/events.js';
import type { Deployment } from '../../../../domain/deployments/types.js';
import { LOG_STREAM_TIMING, resumeFrom } from '../../../../domain/streams/deployment-log.js';
import { deploymentLogFrames } from '../../../../functions/streams/deployment-logs.js';
import { FakeClock } from '../../../fakes/clock.js';
import { aDeployment, FakeDeploymentRepository } from '../../../fakes/deployments.js';
import { FakeDeploymentEventStore } from './fake-event-store.js';

const log = (message: string): DeploymentEvent => ({
  type: 'log',
  log: {
    timestamp: '2026-11-22T10:00:01.000Z',
    level: 'info',
    step_id: null,
    target_id: null,
    target_name: null,
    message,
    metadata: null,
  },
});
const end = (deploymentId: string, new_state: 'success' | 'cancelled' = 'success'): DeploymentEvent => ({
  type: 'state_change',
  deployment_id: deploymentId,
  old_state: 'running',
  new_state,
  message: new_state,
});

interface Frame {
  id?: string;
  data?: { event: string; data: Record<string, unknown> };
  retry?: string;
  comment?: string;
}

/** Parses SSE text strictly: every field line is id, data, retry or a comment; no `event:` field ever. */
const parse = (raw: string): Frame[] =>
  raw
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const frame: Frame = {};
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) frame.id = line.slice(4);
        else if (line.startsWith('data: ')) {
          expect(frame.data).toBeUndefined(); // one data line per message
          frame.data = JSON.parse(line.slice(6));
        } else if (line.startsWith('retry: ')) frame.retry = line.slice(7);
        else if (line.startsWith(': ')) frame.comment = line.slice(2);
        else throw new Error(`unexpected line ${JSON.stringify(line)}`);
      }
      return frame;
    });

/** Runs the stream to its end with a clock that jumps by each sleep; `onSleep` may change the world meanwhile. */
const run = async (
  setup: {
    deployment?: Deployment;
    from?: number;
    onSleep?: (elapsedMs: number) => Promise<void> | void;
    events?: FakeDeploymentEventStore;
  } = {},
) => {
  const clock = new FakeClock(new Date('2026-11-22T10:10:00.000Z'));
  const deployments = new FakeDeploymentRepository();
  const deployment = deployments.put(setup.deployment ?? aDeployment());
  const events = setup.events ?? new FakeDeploymentEventStore();
  const started = clock.now().getTime();
  let sleeps = 0;
  const wait = async (ms: number) => {
    sleeps += 1;
    if (sleeps > 10_000) throw new Error('the stream never ended');
    clock.advance(ms);
    await setup.onSleep?.(clock.now().getTime() - started);
  };
  const world = { clock, deployments, deployment, events };
  let raw = '';
  const frames = async () => {
    for await (const frame of deploymentLogFrames(
      { deployments, events, clock },
      deployment,
      setup.from ?? 0,
      new AbortController().signal,
      LOG_STREAM_TIMING,
      wait,
    ))
      raw += frame;
    return { raw, frames: parse(raw), elapsedMs: clock.now().getTime() - started };
  };
  return { world, frames };
};

const messages = (frames: Frame[]) =>
  frames.filter((f) => f.data !== undefined).map((f) => [f.id ?? null, f.data!.event]);

describe('deploymentLogFrames', () => {
  it('opens with a retry hint and a ping, sends stored events in order with their seq as id, and closes after the terminal state_change', async () => {
    // Prepare
    const events = new FakeDeploymentEventStore();
    const d = aDeployment();
    await events.append(d.id, [
      { at: 'x', event: log('one') },
      { at: 'x', event: log('two') },
      { at: 'x', event: end(d.id) },
      { at: 'x', event: log('after the end') },
    ]);
    const { frames } = await run({ deployment: d, events });
    // Act
    const out = await frames();
    // Assess
    expect(out.frames[0]).toEqual({ retry: '2000' });
    expect(out.frames[1]).toEqual({ data: { event: 'ping', data: { type: 'ping' } } });
    expect(messages(out.frames)).toEqual([
      [null, 'ping'],
      ['1', 'log'],
      ['2', 'log'],
      ['3', 'state_change'],
    ]);
    for (const f of out.frames.filter((f) => f.data !== undefined)) expect(f.data!.data['type']).toBe(f.data!.event);
    expect(out.raw).not.toMatch(/^event:/m);
  });

  it('delivers events appended while it is open, pings after 15 s of silence, and ends on the terminal state_change', async () => {
    const d = aDeployment();
    const events = new FakeDeploymentEventStore();
    let late = false;
    const { frames } = await run({
      deployment: d,
      events,
      onSleep: async (elapsed) => {
        if (elapsed === 1_000) await events.append(d.id, [{ at: 'x', event: log('early') }]);
        // Quiet since 1 s: the stream reads once a second by then, so the late events land between two reads
        if (elapsed >= 20_000 && !late && (late = true))
          await events.append(d.id, [
            { at: 'x', event: log('late') },
            { at: 'x', event: end(d.id) },
          ]);
      },
    });
    const out = await frames();
    expect(messages(out.frames)).toEqual([
      [null, 'ping'],
      ['1', 'log'],
      [null, 'ping'],
      ['2', 'log'],
      ['3', 'state_change'],
    ]);
    expect(out.elapsedMs).toBeGreaterThanOrEqual(20_000);
    expect(out.elapsedMs).toBeLessThanOrEqual(21_000); // read within the backed-off second
  });

  it('resumes after a seq without repeating or losing events', async () => {
    const d = aDeployment();
    const events = new FakeDeploymentEventStore();
    await events.append(
      d.id,
      ['a', 'b', 'c', 'd'].map((m) => ({ at: 'x', event: log(m) })),
    );
    await events.append(d.id, [{ at: 'x', event: end(d.id) }]);
    const out = await (await run({ deployment: d, events, from: 2 })).frames();
    expect(messages(out.frames)).toEqual([
      [null, 'ping'],
      ['3', 'log'],
      ['4', 'log'],
      ['5', 'state_change'],
    ]);
  });

  it('closes at once for a client resuming after the terminal state_change', async () => {
    const d = aDeployment({ state: 'success', completedAt: '2026-11-22T10:00:00.000Z' });
    const events = new FakeDeploymentEventStore();
    await events.append(d.id, [{ at: 'x', event: log('a') }]);
    await events.appendOnce(d.id, [{ key: stateEventKey('success'), events: [{ at: 'x', event: end(d.id) }] }]);
    const out = await (await run({ deployment: d, events, from: 2 })).frames();
    expect(messages(out.frames)).toEqual([[null, 'ping']]);
    expect(out.elapsedMs).toBe(0);
  });

  it('sends no second end to a client resuming after a line stored after the terminal state_change (an analysis)', async () => {
    const d = aDeployment({ state: 'failed', completedAt: '2026-11-22T10:00:00.000Z' });
    const events = new FakeDeploymentEventStore();
    await events.append(d.id, [{ at: 'x', event: log('a') }]);
    await events.appendOnce(d.id, [{ key: stateEventKey('failed'), events: [{ at: 'x', event: end(d.id) }] }]);
    await events.append(d.id, [{ at: 'x', event: log('analysis') }]);
    const out = await (await run({ deployment: d, events, from: 3 })).frames();
    expect(messages(out.frames)).toEqual([[null, 'ping']]);
  });

  it('ends a finished deployment whose store has no terminal state_change with one built from its record, once', async () => {
    const d = aDeployment({
      state: 'cancelled',
      completedAt: '2026-11-22T10:00:00.000Z',
      errorMessage: 'Cancelled by a user.',
    });
    const events = new FakeDeploymentEventStore();
    await events.append(d.id, [{ at: 'x', event: log('a') }]);
    const first = await (await run({ deployment: d, events })).frames();
    expect(messages(first.frames)).toEqual([
      [null, 'ping'],
      ['1', 'log'],
      ['2', 'state_change'],
    ]);
    expect(first.frames.at(-1)!.data!.data).toEqual({
      type: 'state_change',
      deployment_id: d.id,
      old_state: 'running',
      new_state: 'cancelled',
      message: 'Cancelled by a user.',
    });
    const resumed = await (await run({ deployment: d, events, from: 2 })).frames();
    expect(messages(resumed.frames)).toEqual([[null, 'ping']]);
  });

  it('notices a running deployment that finishes without an event, and waits the grace period for the real one', async () => {
    const d = aDeployment();
    const events = new FakeDeploymentEventStore();
    const holder: { world?: Awaited<ReturnType<typeof run>>['world'] } = {};
    let finished = false;
    const started = await run({
      deployment: d,
      events,
      onSleep: (elapsed) => {
        const world = holder.world!;
        if (elapsed >= 5_000 && !finished && (finished = true))
          world.deployments.put({
            ...d,
            state: 'failed',
            completedAt: world.clock.now().toISOString(),
            errorMessage: 'engine died',
          });
      },
    });
    holder.world = started.world;
    const out = await started.frames();
    expect(messages(out.frames)).toEqual([
      [null, 'ping'],
      ['1', 'state_change'],
    ]);
    expect(out.frames.at(-1)!.data!.data).toMatchObject({ new_state: 'failed', message: 'engine died' });
    expect(out.elapsedMs).toBeGreaterThanOrEqual(7_000); // the 2 s grace
    // A quiet stream re-reads the deployment every 10 s: noticed within 10 s, then the grace
    expect(out.elapsedMs).toBeLessThanOrEqual(5_400 + 10_000 + 2_000 + 1_000);
  });

  it('ends itself before the platform limit with a retry hint', async () => {
    const out = await (await run()).frames();
    expect(out.elapsedMs).toBeGreaterThanOrEqual(14 * 60_000);
    expect(out.elapsedMs).toBeLessThan(14 * 60_000 + 1_000); // the backed-off read after the limit
    expect(out.frames.slice(-2)).toEqual([{ retry: '2000' }, { comment: expect.stringContaining('Last-Event-ID') }]);
    expect(messages(out.frames).filter(([, e]) => e === 'ping')).toHaveLength(
      1 + Math.floor((14 * 60_000 - 1) / 15_000),
    );
  });

  it('rides out a store outage', async () => {
    const d = aDeployment();
    const events = new FakeDeploymentEventStore();
    await events.append(d.id, [
      { at: 'x', event: log('a') },
      { at: 'x', event: end(d.id) },
    ]);
    events.failNext = 2;
    const out = await (await run({ deployment: d, events })).frames();
    expect(messages(out.frames)).toEqual([
      [null, 'ping'],
      ['1', 'log'],
      ['2', 'state_change'],
    ]);
  });
});

describe('resumeFrom', () => {
  it('prefers the Last-Event-ID header, then ?last_event_id=, then 0; rejects a malformed header', () => {
    expect(resumeFrom('7', 3)).toBe(7);
    expect(resumeFrom(undefined, 3)).toBe(3);
    expect(resumeFrom(undefined, undefined)).toBe(0);
    expect(() => resumeFrom('abc', undefined)).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
  });
});
