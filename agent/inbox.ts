// Claims from the target's inbox over HTTP (GET /api/v1/agent/commands): drained at once when the socket wakes the
// agent (one drain at a time, requests coalesce), or long-polled when there is no socket. Never asks for more
// commands than there are free slots; with none it still asks (max=0) for cancel notices.
import { backoffDelay, sleep } from './backoff.js';
import { cadenceSeconds, Drainer } from './channel.js';
import { AbortedError, type AgentClient } from './client.js';
import type { ChannelResponse, PollResponse } from '../protocol/messages.js';
import type { Workload } from './workload.js';

export interface InboxDeps {
  readonly client: AgentClient;
  readonly work: Workload;
  /** Aborted when the agent stops taking work. */
  readonly stopSignal: AbortSignal;
  readonly log: (message: string) => void;
  /** The agent's own long-poll wait (the server's shorter value wins). */
  readonly pollWaitSeconds: number;
}

export class Inbox {
  private pollController: AbortController | undefined;
  private pollMax = 0;
  private waitSeconds: number;
  /** The last drain stopped because every slot was taken: a freed slot drains again. */
  private mayHoldMore = false;
  private readonly drainer: Drainer;

  constructor(private readonly deps: InboxDeps) {
    this.waitSeconds = deps.pollWaitSeconds;
    this.drainer = new Drainer(
      () => this.drainOnce(),
      (error) => deps.log(`draining the inbox failed: ${(error as Error).message}`),
    );
  }

  /** The long poll's wait now, in seconds. */
  get pollWait(): number {
    return this.waitSeconds;
  }

  /** A channel answer: its poll wait is taken where shorter than the agent's own. */
  adopt(channel: ChannelResponse): void {
    this.waitSeconds = Math.max(1, Math.floor(cadenceSeconds(this.deps.pollWaitSeconds, channel.poll_wait_seconds)));
  }

  /** Drains the inbox (now, or once more after the drain under way). */
  drain(): void {
    void this.drainer.request();
  }

  /**
   * A slot was freed: a poll waiting only for cancels (max=0) is cut short so that the next one can take work, and
   * over the socket the inbox is drained again when the last drain may have left commands in it.
   */
  slotFreed(overSocket: boolean): void {
    if (this.pollMax === 0) this.pollController?.abort();
    if (overSocket && this.mayHoldMore) {
      this.mayHoldMore = false;
      this.drain();
    }
  }

  /** Long polling, as the only transport or as the fallback; ends when `keepGoing` turns false (after its poll). */
  async pollLoop(keepGoing: () => boolean = () => true): Promise<void> {
    const { deps } = this;
    const stop = deps.stopSignal;
    let refusals = 0;
    while (!stop.aborted && keepGoing()) {
      const free = deps.work.freeSlots;
      const controller = new AbortController();
      this.pollController = controller;
      this.pollMax = free;
      const started = Date.now();
      let answer;
      try {
        answer = await deps.client.poll(this.waitSeconds, free, AbortSignal.any([stop, controller.signal]));
        refusals = 0;
      } catch (error) {
        if (error instanceof AbortedError) continue;
        deps.log(`polling failed: ${(error as Error).message}`);
        await sleep(backoffDelay(refusals++), stop);
        continue;
      } finally {
        this.pollController = undefined;
      }
      await this.take(answer);
      // An answer with nothing to start (only cancels this agent already acted on) must not turn into a busy loop.
      if (answer.commands.length === 0 && Date.now() - started < 1000) await sleep(1000 - (Date.now() - started), stop);
    }
  }

  /**
   * GET /agent/commands?wait=0&max=<free slots>, again while an answer filled every slot asked for. With no free
   * slot it still asks once (max=0) for cancel notices, and a freed slot drains again.
   */
  private async drainOnce(): Promise<void> {
    const { deps } = this;
    const stop = deps.stopSignal;
    for (;;) {
      if (stop.aborted) return;
      const free = deps.work.freeSlots;
      let answer;
      try {
        answer = await deps.client.poll(0, free, stop);
      } catch (error) {
        if (error instanceof AbortedError) return;
        throw error;
      }
      await this.take(answer);
      const filled = answer.commands.length >= free;
      this.mayHoldMore = filled;
      if (!filled) return;
      if (deps.work.freeSlots <= 0) return; // a freed slot drains again
    }
  }

  /** Acts on a claim's answer: its cancel notices first, then its commands in order. */
  private async take(answer: PollResponse): Promise<void> {
    for (const id of answer.cancel) this.deps.work.cancel(id);
    for (const command of answer.commands) await this.deps.work.receive(command);
  }
}
