// Open event streams per user: at most `limit` at once. Each open stream holds a lease on one of the user's
// `limit` slots, taken with a conditional write (the slot is free or its lease expired), renewed by the open
// stream while it runs, released when it ends. A process that dies without releasing leaves a lease that expires
// by itself (`ttlMs` after its last renewal): a crashed stream never holds a slot for good.

export interface StreamLease {
  readonly userId: string;
  readonly slot: number;
  readonly leaseId: string;
}

export interface SlotState {
  readonly slot: number;
  /** Epoch ms the holder's lease runs out. */
  readonly expiresAt: number;
}

/** Port: the slots of one user, stored (adapter: infra/dynamodb/stream-lease-repository.ts). */
export interface StreamLeaseStore {
  /** The slots the user has written (held or expired). */
  slots(userId: string): Promise<readonly SlotState[]>;
  /** Takes the slot when it is free or its lease expired before `now` (one conditional write). */
  claim(lease: StreamLease, now: number, expiresAt: number): Promise<boolean>;
  /** Extends the lease while it is still this one's; false when another stream took the slot meanwhile. */
  renew(lease: StreamLease, expiresAt: number): Promise<boolean>;
  release(lease: StreamLease): Promise<void>;
}

/** Slots worth trying, in order: never written first, then expired ones; none when every slot is held. */
export const freeSlots = (slots: readonly SlotState[], limit: number, now: number): readonly number[] => {
  const written = new Map(slots.map((s) => [s.slot, s.expiresAt]));
  const free: number[] = [];
  for (let slot = 0; slot < limit; slot += 1) if (!written.has(slot)) free.push(slot);
  for (let slot = 0; slot < limit; slot += 1) if ((written.get(slot) ?? Infinity) <= now) free.push(slot);
  return free;
};

/** A lease on one of the user's slots, or undefined when `limit` streams are open (every slot held). */
export const acquireStreamLease = async (
  store: StreamLeaseStore,
  request: {
    readonly userId: string;
    readonly leaseId: string;
    readonly limit: number;
    readonly ttlMs: number;
    readonly now: number;
  },
): Promise<StreamLease | undefined> => {
  for (const slot of freeSlots(await store.slots(request.userId), request.limit, request.now)) {
    const lease = { userId: request.userId, slot, leaseId: request.leaseId };
    // Lost races move on to the next free slot; a slot someone else holds fails its condition.
    if (await store.claim(lease, request.now, request.now + request.ttlMs)) return lease;
  }
  return undefined;
};
