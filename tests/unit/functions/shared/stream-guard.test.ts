import { setTimeout as pause } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { SlotState, StreamLease, StreamLeaseStore } from '../../../../domain/identity/stream-leases.js';
import type { Caller } from '../../../../domain/identity/types.js';
import { guardedStream, type StreamGuardDeps } from '../../../../functions/shared/stream-guard.js';

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
    slots: async (): Promise<SlotState[]> => [...held.keys()].map((slot) => ({ slot, expiresAt: Number.MAX_SAFE_INTEGER })),
    claim: async (lease: StreamLease) => (held.has(lease.slot) ? false : (held.set(lease.slot, lease.leaseId), true)),
    renew: async () => ((leases.renewed += 1), true),
    release: async (lease: StreamLease) => void held.delete(lease.slot),
  };
  return leases;
};

const guardOf = (leases: StreamLeaseStore, limit = 2): StreamGuardDeps => {
  let n = 0;
  return { leases, limit, clock: { now: () => new Date() }, newLeaseId: () => `lease-${(n += 1)}` };
};

describe('guardedStream', () => {
  it('ends the stream soon after the caller’s re-check fails, and releases its lease', async () => {
    const leases = store();
    let valid = true;
    const result = await guardedStream(guardOf(leases), { ...caller, stillValid: async () => valid }, pings, timing);
    setTimeout(() => (valid = false), 60);
    const { text, ms } = await read(result.body);
    expect(result.statusCode).toBe(200);
    expect(text).toContain('no longer valid');
    expect(ms).toBeLessThan(1_000);
    expect(leases.renewed).toBeGreaterThan(0);
    expect(leases.held.size).toBe(0);
  });

  it('re-checks at every interval but renews the lease only once half its life is gone', async () => {
    // Prepare: re-checks every 20 ms, a 400 ms lease (renewed at most every 200 ms)
    const leases = store();
    let checks = 0;
    const result = await guardedStream(guardOf(leases), { ...caller, stillValid: async () => ((checks += 1), true) }, pings, { recheckMs: 20, leaseTtlMs: 400 });
    // Act
    await read(result.body, 500);
    result.body.destroy();
    // Assess
    expect(checks).toBeGreaterThanOrEqual(10);
    expect(leases.renewed).toBeGreaterThanOrEqual(1);
    expect(leases.renewed).toBeLessThanOrEqual(3);
  });

  it('answers a plain-text 429 when the user has `limit` streams open', async () => {
    const leases = store();
    const guard = guardOf(leases);
    const open = [await guardedStream(guard, caller, pings, timing), await guardedStream(guard, caller, pings, timing)];
    const refused = await guardedStream(guard, caller, pings, timing);
    expect(open.map((r) => r.statusCode)).toEqual([200, 200]);
    expect([refused.statusCode, refused.headers['content-type'], refused.headers['retry-after']]).toEqual([429, 'text/plain; charset=utf-8', '5']);
    for (const r of open) r.body.destroy();
  });
});
