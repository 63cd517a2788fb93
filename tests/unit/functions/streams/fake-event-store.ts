// An in-memory DeploymentEventStore with the adapter's guarantees (contiguous seqs from 1, order kept), for unit
// tests of what writes and reads deployment events. `failNext` makes the next read throw (a store outage).
import {
  boundedEvent,
  contiguousAfter,
  forwardInTime,
  redatedEvent,
  type DeploymentEventStore,
  type KeyedEventAppender,
  type KeyedEventLookup,
  type KeyedEvents,
  type NewEvent,
  type StoredEvent,
} from '../../../../domain/deployments/events.js';

export class FakeDeploymentEventStore implements DeploymentEventStore, KeyedEventAppender, KeyedEventLookup {
  readonly events = new Map<string, StoredEvent[]>();
  /** The keys of the groups appended, per deployment (the adapter's markers). */
  readonly marked = new Map<string, Set<string>>();
  /** Where each keyed group starts, per deployment and key (the markers' first seqs). */
  readonly firstSeqs = new Map<string, number>();
  failNext = 0;
  reads = 0;

  async append(deploymentId: string, events: readonly NewEvent[]): Promise<readonly StoredEvent[]> {
    const list = this.events.get(deploymentId) ?? [];
    const stored = forwardInTime(list.at(-1)?.at, events, (e, at) => ({ at, event: redatedEvent(e.event, at) })).map(
      (e, i) => ({
        seq: list.length + 1 + i,
        at: e.at,
        event: boundedEvent(e.event),
      }),
    );
    this.events.set(deploymentId, [...list, ...stored]);
    return stored;
  }

  /** Each group at most once (the check and the append are one step, as the adapter's conditional transaction). */
  async appendOnce(deploymentId: string, groups: readonly KeyedEvents[]): Promise<readonly StoredEvent[]> {
    const marked = this.marked.get(deploymentId) ?? new Set<string>();
    this.marked.set(deploymentId, marked);
    const fresh = groups.filter((g) => g.events.length > 0 && !marked.has(g.key));
    for (const g of fresh) marked.add(g.key);
    const stored = await this.append(
      deploymentId,
      fresh.flatMap((g) => g.events),
    );
    let at = 0;
    for (const g of fresh) {
      this.firstSeqs.set(`${deploymentId}|${g.key}`, stored[at]!.seq);
      at += g.events.length;
    }
    return stored;
  }

  async keyedSeq(deploymentId: string, key: string): Promise<number | undefined> {
    return this.firstSeqs.get(`${deploymentId}|${key}`);
  }

  async after(deploymentId: string, seq: number, limit: number): Promise<readonly StoredEvent[]> {
    this.reads += 1;
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw new Error('store unavailable');
    }
    return contiguousAfter(seq, (this.events.get(deploymentId) ?? []).filter((e) => e.seq > seq).slice(0, limit));
  }

  async page(deploymentId: string, offset: number, limit: number): Promise<readonly StoredEvent[]> {
    return this.after(deploymentId, offset, limit);
  }

  async last(deploymentId: string): Promise<StoredEvent | undefined> {
    return this.events.get(deploymentId)?.at(-1);
  }
}
