// An in-memory DeploymentEventStore with the adapter's guarantees (contiguous seqs from 1, order kept), for unit
// tests of what writes and reads deployment events. `failNext` makes the next read throw (a store outage).
import {
  boundedEvent,
  contiguousAfter,
  type DeploymentEventStore,
  type NewEvent,
  type StoredEvent,
} from '../../../../domain/deployments/events.js';

export class FakeDeploymentEventStore implements DeploymentEventStore {
  readonly events = new Map<string, StoredEvent[]>();
  failNext = 0;
  reads = 0;

  async append(deploymentId: string, events: readonly NewEvent[]): Promise<readonly StoredEvent[]> {
    const list = this.events.get(deploymentId) ?? [];
    const stored = events.map((e, i) => ({ seq: list.length + 1 + i, at: e.at, event: boundedEvent(e.event) }));
    this.events.set(deploymentId, [...list, ...stored]);
    return stored;
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
