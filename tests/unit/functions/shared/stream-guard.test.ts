import { setTimeout as pause } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { SlotState, StreamLease, StreamLeaseStore } from '../../../../domain/identity/stream-leases.js';
import type { Caller } from '../../../../domain/identity/types.js';
import type { StreamGuardDeps } from '../../../../domain/streams/guard.js';
import { guardedStream } from '../../../../functions/shared/stream-guard.js';

const caller: Caller = { kind: 'user', userId: 'u1', tenantId: null, roles: [], permissions: new Set() };
const timing = { recheckMs: 20, leaseTtlMs: 40 };

/** Pings until aborted. */
async function* pings(signal: AbortSignal): AsyncGenerator<string> {
  while (!signal.aborted) {
    yield ': ping\n\n';
    await pause(5, undefined, { signal }).catch(() => undefined);
  }
}

const read = async (body: NodeJS.ReadableStream, limitMs = 2_000) => {
  let text = '';
  const started = Date.now();
  for await (const chunk of body) {
    text += String(chunk);
    if (Date.now() - started > limitMs) break;
  }
  return { text, ms: Date.now() - started };
};

const store = () => {
  const held = new Map<number, string>();
  const leases: StreamLeaseStore & { held: typeof held; renewed: number } = {
    held,
    renewed: 0,
    slots: async (): Promise<SlotState[]> =>
      [...held.keys()].map((slot) => ({ slot, expiresAt: Number.MAX_SAFE_INTEGER })),
    claim: async (lease: StreamLease) => (held.has(lease.slot) ? false : (held.set(lease.slot, lease.leaseId), true)),
    renew: async () => ((leases.renewed += 1), true),
    release: async (lease: StreamLease) => void held.delete(lease.slot),
  };
  return leases;
};

/** A clock the test moves: the guard decides renewals by it, so they do not depend on how fast timers fire. */
const fakeClock = () => {
  let at = Date.parse('2026-01-01T00:00:00Z');
  return { now: () => new Date(at), advance: (ms: number) => void (at += ms) };
};

const guardOf = (
  leases: StreamLeaseStore,
  limit = 2,
  clock: { now: () => Date } = { now: () => new Date() },
): StreamGuardDeps => {
  let n = 0;
  return { leases, limit, clock, newLeaseId: () => `lease-${(n += 1)}` };
};

describe('guardedStream', () => {
  it('ends the stream soon after the caller’s re-check fails, and releases its lease', async () => {
    // Prepare: each re-check is 30 ms later on the guard's clock (past half the 40 ms lease); the caller is valid
    // until the lease has been renewed once, then not
    const leases = store();
    const clock = fakeClock();
    const stillValid = async () => (clock.advance(30), leases.renewed === 0);
    const result = await guardedStream(guardOf(leases, 2, clock), { ...caller, stillValid }, pings, timing);
    // Act: read until the stream ends by itself (read() gives up after 60 s)
    const { text } = await read(result.body, 60_000);
    // Assess
    expect(result.statusCode).toBe(200);
    expect(text).toContain('no longer valid');
    expect(leases.renewed).toBe(1);
    expect(leases.held.size).toBe(0);
  });

  it('re-checks at every interval but renews the lease only once half its life is gone', async () => {
    // Prepare: re-checks every 20 ms of the guard's clock, a 400 ms lease (renewed once 200 ms have passed)
    const leases = store();
    const clock = fakeClock();
    let checks = 0;
    const stillValid = async () => ((checks += 1), clock.advance(20), true);
    const result = await guardedStream(guardOf(leases, 2, clock), { ...caller, stillValid }, pings, {
      recheckMs: 20,
      leaseTtlMs: 400,
    });
    // Act: read until 25 re-checks have run (500 ms of the guard's clock)
    for await (const _chunk of result.body) if (checks >= 25) break;
    result.body.destroy();
    // Assess: every re-check ran the caller check; the lease was renewed at 200 and 400 ms only
    expect(checks).toBeGreaterThanOrEqual(25);
    expect(leases.renewed).toBe(2);
  });

  it('answers a plain-text 429 when the user has `limit` streams open', async () => {
    const leases = store();
    const guard = guardOf(leases);
    const open = [await guardedStream(guard, caller, pings, timing), await guardedStream(guard, caller, pings, timing)];
    const refused = await guardedStream(guard, caller, pings, timing);
    expect(open.map((r) => r.statusCode)).toEqual([200, 200]);
    expect([refused.statusCode, refused.headers['content-type'], refused.headers['retry-after']]).toEqual([
      429,
      'text/plain; charset=utf-8',
      '5',
    ]);
    for (const r of open) r.body.destroy();
  });
});
