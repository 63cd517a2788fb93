import { describe, expect, it } from 'vitest';
import {
  acquireStreamLease,
  freeSlots,
  type SlotState,
  type StreamLease,
  type StreamLeaseStore,
} from '../../../../domain/identity/stream-leases.js';

/** The store's conditions, in memory: claim when free or expired, renew and release only by the holder. */
class MemoryLeases implements StreamLeaseStore {
  readonly held = new Map<string, { leaseId: string; expiresAt: number }>();
  private key = (userId: string, slot: number) => `${userId}#${slot}`;
  async slots(userId: string): Promise<readonly SlotState[]> {
    return [...this.held.entries()]
      .filter(([k]) => k.startsWith(`${userId}#`))
      .map(([k, v]) => ({ slot: Number(k.split('#')[1]), expiresAt: v.expiresAt }));
  }
  async claim(lease: StreamLease, now: number, expiresAt: number) {
    const current = this.held.get(this.key(lease.userId, lease.slot));
    if (current !== undefined && current.expiresAt > now) return false;
    this.held.set(this.key(lease.userId, lease.slot), { leaseId: lease.leaseId, expiresAt });
    return true;
  }
  async renew(lease: StreamLease, expiresAt: number) {
    const current = this.held.get(this.key(lease.userId, lease.slot));
    if (current?.leaseId !== lease.leaseId) return false;
    this.held.set(this.key(lease.userId, lease.slot), { leaseId: lease.leaseId, expiresAt });
    return true;
  }
  async release(lease: StreamLease) {
    if (this.held.get(this.key(lease.userId, lease.slot))?.leaseId === lease.leaseId)
      this.held.delete(this.key(lease.userId, lease.slot));
  }
}

const take = (store: StreamLeaseStore, n: number, now: number, userId = 'u1') =>
  acquireStreamLease(store, { userId, leaseId: `lease-${n}`, limit: 3, ttlMs: 30_000, now });

describe('freeSlots', () => {
  it('lists never-used slots first, then expired ones, and none when all are held', () => {
    expect(freeSlots([], 3, 0)).toEqual([0, 1, 2]);
    expect(
      freeSlots(
        [
          { slot: 0, expiresAt: 100 },
          { slot: 2, expiresAt: 50 },
        ],
        3,
        60,
      ),
    ).toEqual([1, 2]);
    expect(
      freeSlots(
        [
          { slot: 0, expiresAt: 100 },
          { slot: 1, expiresAt: 100 },
          { slot: 2, expiresAt: 100 },
        ],
        3,
        60,
      ),
    ).toEqual([]);
  });
});

describe('acquireStreamLease', () => {
  it('grants `limit` leases per user, refuses the next, and frees a slot on release', async () => {
    const store = new MemoryLeases();
    const leases = [await take(store, 1, 0), await take(store, 2, 0), await take(store, 3, 0)];
    expect(leases.map((l) => l?.slot)).toEqual([0, 1, 2]);
    expect(await take(store, 4, 0)).toBeUndefined();
    expect(await take(store, 5, 0, 'u2')).toMatchObject({ slot: 0 });
    await store.release(leases[1]!);
    expect(await take(store, 6, 0)).toMatchObject({ slot: 1, leaseId: 'lease-6' });
  });

  it('lets a crashed stream’s lease expire by itself, while a renewed one holds', async () => {
    const store = new MemoryLeases();
    const first = (await take(store, 1, 0))!;
    await take(store, 2, 0);
    await take(store, 3, 0);
    expect(await store.renew(first, 50_000)).toBe(true); // the open stream renews; the other two crashed
    const later = await take(store, 4, 31_000);
    expect(later?.slot).toBe(1);
    expect(await take(store, 5, 31_000)).toMatchObject({ slot: 2 });
    expect(await take(store, 6, 31_000)).toBeUndefined();
  });

  it('moves on to the next slot when another stream claimed the first one meanwhile', async () => {
    const store = new MemoryLeases();
    const racing: StreamLeaseStore = {
      slots: () => store.slots('u1'),
      claim: async (lease, now, expiresAt) => (lease.slot === 0 ? false : store.claim(lease, now, expiresAt)),
      renew: (l, e) => store.renew(l, e),
      release: (l) => store.release(l),
    };
    expect(await take(racing, 1, 0)).toMatchObject({ slot: 1 });
  });
});
