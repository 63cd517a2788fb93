// The local front's admission gate: bounded slots, a bounded queue with a longest wait, slots released however a
// request ends, and the lanes of long-lived and health requests.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAdmission, laneOf, type AdmissionLimits, type Ticket } from '../../../local/admission.js';

const LIMITS: AdmissionLimits = { maxInFlight: 2, maxQueued: 4, maxWaitMs: 500, healthSlots: 1 };

/** A request's lifetime, as the front gives it (aborted when the response closes). */
const request = () => new AbortController();

/** Whether a promise has settled yet, and with what. */
const watch = (promise: Promise<Ticket>) => {
  const state: { ticket?: Ticket } = {};
  void promise.then((ticket) => (state.ticket = ticket));
  return state;
};

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('admission gate', () => {
  it('admits up to maxInFlight at once, queues the next ones and sheds past the queue at once', async () => {
    // Prepare
    const gate = createAdmission(LIMITS);
    // Act
    const first = await gate.enter('api', request().signal);
    const second = await gate.enter('api', request().signal);
    const waiting = Array.from({ length: 4 }, () => watch(gate.enter('api', request().signal)));
    const seventh = await gate.enter('api', request().signal);
    await vi.advanceTimersByTimeAsync(0);
    // Assess
    expect(first.admitted && second.admitted).toBe(true);
    expect(waiting.map((w) => w.ticket)).toEqual([undefined, undefined, undefined, undefined]);
    expect(seventh).toEqual({ admitted: false, reason: 'queue_full' });
    expect(gate.inFlight).toBe(2);
    expect(gate.queued).toBe(4);
  });

  it('sheds at once when the queue ahead would take longer than maxWaitMs to drain at the mean service time', async () => {
    // Prepare: a request held its slot 400 ms (fake time); with 2 slots, the queue drains 2 requests per 400 ms.
    const gate = createAdmission({ ...LIMITS, maxQueued: 10 }, () => Date.now());
    const warm = await gate.enter('api', request().signal);
    await vi.advanceTimersByTimeAsync(400);
    if (warm.admitted) warm.release();
    await gate.enter('api', request().signal);
    await gate.enter('api', request().signal);
    // Act
    const first = watch(gate.enter('api', request().signal)); // within one round: waits
    const second = watch(gate.enter('api', request().signal)); // within one round: waits
    const third = await gate.enter('api', request().signal); // expected wait 800 ms: over maxWaitMs
    await vi.advanceTimersByTimeAsync(0);
    // Assess
    expect(first.ticket).toBeUndefined();
    expect(second.ticket).toBeUndefined();
    expect(third).toEqual({ admitted: false, reason: 'queue_full' });
    expect(gate.queued).toBe(2);
  });

  it('gives a freed slot to the longest-waiting request', async () => {
    // Prepare
    const gate = createAdmission(LIMITS);
    const first = await gate.enter('api', request().signal);
    await gate.enter('api', request().signal);
    const third = watch(gate.enter('api', request().signal));
    const fourth = watch(gate.enter('api', request().signal));
    // Act
    if (first.admitted) first.release();
    await vi.advanceTimersByTimeAsync(0);
    // Assess
    expect(third.ticket?.admitted).toBe(true);
    expect(fourth.ticket).toBeUndefined();
    expect(gate.inFlight).toBe(2);
    expect(gate.queued).toBe(1);
  });

  it('sheds a request past the first maxInFlight in the queue that waited maxWaitMs, and not before', async () => {
    // Prepare
    const gate = createAdmission(LIMITS);
    await gate.enter('api', request().signal);
    await gate.enter('api', request().signal);
    const patient = [watch(gate.enter('api', request().signal)), watch(gate.enter('api', request().signal))];
    const waiting = watch(gate.enter('api', request().signal));
    // Act
    await vi.advanceTimersByTimeAsync(499);
    const before = waiting.ticket;
    await vi.advanceTimersByTimeAsync(1);
    const after = waiting.ticket;
    await vi.advanceTimersByTimeAsync(60_000);
    // Assess
    expect(before).toBeUndefined();
    expect(after).toEqual({ admitted: false, reason: 'queue_timeout' });
    expect(patient.map((p) => p.ticket)).toEqual([undefined, undefined]); // one round: they wait for their turn
    expect(gate.queued).toBe(2);
    expect(gate.inFlight).toBe(2);
  });

  it('releases a slot when the request ends (finished, aborted or failed: the response closed), once', async () => {
    // Prepare
    const gate = createAdmission(LIMITS);
    const ended = request();
    const ticket = await gate.enter('api', ended.signal);
    await gate.enter('api', request().signal);
    const waiting = watch(gate.enter('api', request().signal));
    // Act
    ended.abort();
    if (ticket.admitted) ticket.release(); // released again by hand: counted once
    await vi.advanceTimersByTimeAsync(0);
    // Assess
    expect(waiting.ticket?.admitted).toBe(true);
    expect(gate.inFlight).toBe(2);
    expect(gate.queued).toBe(0);
  });

  it('takes a request that leaves while waiting out of the queue, without a slot', async () => {
    // Prepare
    const gate = createAdmission(LIMITS);
    const first = await gate.enter('api', request().signal);
    await gate.enter('api', request().signal);
    const leaving = request();
    const gone = watch(gate.enter('api', leaving.signal));
    const next = watch(gate.enter('api', request().signal));
    // Act
    leaving.abort();
    if (first.admitted) first.release();
    await vi.advanceTimersByTimeAsync(0);
    // Assess
    expect(gone.ticket).toEqual({ admitted: false, reason: 'left' });
    expect(next.ticket?.admitted).toBe(true);
    expect(gate.inFlight).toBe(2);
    expect(await gate.enter('api', leaving.signal)).toEqual({ admitted: false, reason: 'left' });
  });

  it('keeps slots of their own for health checks, then queues them with the rest', async () => {
    // Prepare
    const gate = createAdmission(LIMITS);
    await gate.enter('api', request().signal);
    await gate.enter('api', request().signal);
    // Act
    const probe = await gate.enter('health', request().signal);
    const secondProbe = watch(gate.enter('health', request().signal));
    await vi.advanceTimersByTimeAsync(0);
    // Assess
    expect(probe.admitted).toBe(true);
    expect(secondProbe.ticket).toBeUndefined();
    expect(gate.queued).toBe(1);
    expect(gate.inFlight).toBe(3);
  });

  it('lets a gate without a waiting bound queue a burst past its slots, shedding only past maxQueued', async () => {
    // Prepare: the agents' gate (1 slot, 3 queued at most, no time bound)
    vi.useFakeTimers();
    const gate = createAdmission({ maxInFlight: 1, maxQueued: 3, maxWaitMs: Number.POSITIVE_INFINITY, healthSlots: 0 });
    const first = await gate.enter('api', request().signal);
    // Act
    const waiting = [1, 2, 3].map(() => watch(gate.enter('api', request().signal)));
    const fifth = await gate.enter('api', request().signal);
    await vi.advanceTimersByTimeAsync(60_000);
    // Assess: nobody shed by time; the one past the queue shed at once; the queue drains in order
    expect(waiting.map((w) => w.ticket)).toEqual([undefined, undefined, undefined]);
    expect(fifth).toEqual({ admitted: false, reason: 'queue_full' });
    if (first.admitted) first.release();
    await vi.advanceTimersByTimeAsync(0);
    expect(waiting.map((w) => w.ticket?.admitted)).toEqual([true, undefined, undefined]);
    vi.useRealTimers();
  });

  it('sorts requests into lanes: agent long polls exempt, the agent protocol apart, health checks apart, the rest api', () => {
    expect(laneOf('GET', '/api/v1/agent/commands')).toBe('exempt');
    expect(laneOf('POST', '/api/v1/agent/commands/c1/output')).toBe('agent');
    expect(laneOf('POST', '/api/v1/agent/heartbeat')).toBe('agent');
    expect(laneOf('POST', '/api/v1/agent/register')).toBe('agent');
    expect(laneOf('GET', '/api/v1/health')).toBe('health');
    expect(laneOf('GET', '/api/v1/health/ready')).toBe('health');
    expect(laneOf('POST', '/api/v1/health')).toBe('api');
    expect(laneOf('GET', '/api/v1/deployments')).toBe('api');
    expect(laneOf('GET', '/api/v1/healthz')).toBe('api');
  });
});
