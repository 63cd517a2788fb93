// The deployments list's summaries, kept per container (issue 34's soak): the first list call reads every summary on
// gsi5; the next ones read only what the change feed (gsi3) lists since the previous look and re-read those
// deployments' summaries, so a list call costs one short query (plus one batch read when something changed) however
// long the table's history is. Deployments are never deleted and never move tenant, so a summary set only grows and
// changes; a full read again every RELOAD_AFTER_MS (or when the feed lists more than it may) bounds what a lost feed
// entry could leave stale.
import type { DeploymentSummary } from '../../domain/deployments/ports.js';
import type { ChangedRecord } from '../../domain/shared/ports.js';

/** The feed is a GSI (eventually consistent) and writers' clocks differ a little: each look reads back this far. */
export const LOOK_BACK_MS = 5_000;
/** A container reads every summary again after this long. */
export const RELOAD_AFTER_MS = 5 * 60_000;
/** More changed entries than this since the last look: a full read is cheaper than re-reading each one. */
export const MAX_CHANGED = 1_000;

export interface SummarySources {
  /** Every deployment's summary (the slim index). */
  all(): Promise<readonly DeploymentSummary[]>;
  /** The deployments written since `from` (ISO time), as the change feed lists them, at most `max`. */
  changedSince(from: string, max: number): Promise<readonly ChangedRecord[]>;
  /** The current summaries of these deployments (a consistent read). */
  summariesOf(ids: readonly string[]): Promise<readonly DeploymentSummary[]>;
}

export class DeploymentSummarySet {
  private readonly summaries = new Map<string, DeploymentSummary>();
  /** Feed entries (`at#id`) already applied, with their time: a later look skips them. */
  private readonly applied = new Map<string, number>();
  /** When the last full read and the last look started (this container's clock); undefined: never. */
  private loadedAt: number | undefined;
  private lookedAt = 0;
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  constructor(
    private readonly sources: SummarySources,
    private readonly now: () => number = Date.now,
  ) {}

  /** Every summary, as of a look that started after this call. */
  async current(): Promise<readonly DeploymentSummary[]> {
    await this.refresh();
    return [...this.summaries.values()];
  }

  /**
   * One look at a time; a call that arrives while one runs waits for the next one (shared by every call that
   * arrived meanwhile), which starts after it and so sees every write committed before it.
   */
  private refresh(): Promise<void> {
    if (this.running === undefined) {
      this.running = this.look().finally(() => {
        this.running = undefined;
      });
      return this.running;
    }
    this.next ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.next = undefined;
        return this.refresh();
      });
    return this.next;
  }

  private async look(): Promise<void> {
    const started = this.now();
    if (this.loadedAt === undefined || started - this.loadedAt >= RELOAD_AFTER_MS) return this.reload(started);
    const from = this.lookedAt - LOOK_BACK_MS;
    // One more than MAX_CHANGED (plus what the look-back re-lists) is enough to know a full read is cheaper.
    const listed = await this.sources.changedSince(new Date(from).toISOString(), MAX_CHANGED + 1 + this.applied.size);
    const entries = listed.filter((entry) => !this.applied.has(`${entry.at}#${entry.id}`));
    if (entries.length > MAX_CHANGED) return this.reload(started);
    const ids = [...new Set(entries.map((entry) => entry.id))];
    if (ids.length > 0) for (const summary of await this.sources.summariesOf(ids)) this.put(summary);
    this.lookedAt = started;
    for (const entry of entries) this.applied.set(`${entry.at}#${entry.id}`, Date.parse(entry.at));
    for (const [key, at] of this.applied) if (at < from) this.applied.delete(key);
  }

  private async reload(started: number): Promise<void> {
    const all = await this.sources.all();
    this.summaries.clear();
    this.applied.clear();
    for (const summary of all) this.put(summary);
    this.loadedAt = started;
    this.lookedAt = started;
  }

  private put(summary: DeploymentSummary): void {
    this.summaries.set(summary.id, summary);
  }
}
