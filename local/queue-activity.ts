// What the SQS emulators of this process were sent, so that the local pollers of the same process wait for a message
// instead of asking an empty queue twenty times a second. Lambda's event-source mapping long-polls: an idle queue
// costs it nothing and a message is taken as it arrives. local-aws-sqs's long poll cannot stand in for that (see
// local/poller.ts), and short polls every 50 ms cost a stack ~150-250 ms of CPU a second while idle (4 queues),
// which every local stack, test file and benchmark paid on 2 cores.
//
// Each in-process emulator (local/emulators.ts startSqs) tells `queueActivity` of every message sent to one of its
// queues once the emulator has stored it (and again when a delayed message becomes visible). A poller of such a
// queue then waits for that, or for IDLE_CHECK_MS at most (messages whose visibility timeout ran out come back
// without a send). A queue that no emulator of this process serves (an emulator elsewhere, LocalStack, the tests'
// shared emulator) is polled as before.

/** An idle poller asks its queue at least this often: a message whose visibility timeout expired comes back unsent. */
export const IDLE_CHECK_MS = 1_000;

/** What a queue's waiting poller is told: a message was sent (or became visible). */
type Waiter = () => void;

export class QueueActivity {
  /** Per queue name: how many sends were told so far. A poller that saw it move since its receive asks again. */
  private readonly counts = new Map<string, number>();
  private readonly waiters = new Map<string, Set<Waiter>>();
  /** The in-process emulators' answers to "do you serve this queue?". */
  private readonly servers = new Set<(queueName: string) => boolean>();

  /** An in-process emulator: its sends are told; returns the function that forgets it (when it stops). */
  serve(serves: (queueName: string) => boolean): () => void {
    this.servers.add(serves);
    return () => this.servers.delete(serves);
  }

  /** Whether an emulator of this process holds the queue (so its sends are told here). */
  serves(queueName: string): boolean {
    for (const serves of this.servers) if (serves(queueName)) return true;
    return false;
  }

  /** The number of sends told for the queue so far: read it before a receive, give it to `wait` after. */
  count(queueName: string): number {
    return this.counts.get(queueName) ?? 0;
  }

  /** A message was sent to the queue (visible now: `delayMs` 0), or will become visible after `delayMs`. */
  sent(queueName: string, delayMs = 0): void {
    if (delayMs > 0) {
      setTimeout(() => this.sent(queueName), delayMs).unref();
      return;
    }
    this.counts.set(queueName, this.count(queueName) + 1);
    const waiting = this.waiters.get(queueName);
    if (waiting === undefined) return;
    this.waiters.delete(queueName);
    for (const wake of waiting) wake();
  }

  /**
   * Resolves when a send to the queue is told after `since` (at once if one was already), after `maxMs`, or when
   * the signal aborts; never rejects.
   */
  wait(queueName: string, since: number, maxMs: number, signal?: AbortSignal): Promise<void> {
    if (this.count(queueName) !== since || signal?.aborted === true) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.waiters.get(queueName)?.delete(done);
        resolve();
      };
      const timer = setTimeout(done, maxMs);
      signal?.addEventListener('abort', done, { once: true });
      const waiting = this.waiters.get(queueName) ?? new Set<Waiter>();
      waiting.add(done);
      this.waiters.set(queueName, waiting);
    });
  }
}

/** The queue name of a queue URL (its last path segment), as SQS and local-aws-sqs read it. */
export const queueNameOf = (queueUrl: string): string => {
  try {
    return new URL(queueUrl).pathname.split('/').filter(Boolean).at(-1) ?? queueUrl;
  } catch {
    return queueUrl.split('/').filter(Boolean).at(-1) ?? queueUrl;
  }
};

/** The sends an SQS request made, read from its body: the queue's name and each message's delay in seconds. */
export const sendsOf = (
  target: string | undefined,
  contentType: string | undefined,
  body: string,
): { queueName: string; delays: number[] } | undefined => {
  const json = contentType?.includes('json') === true;
  const action = json ? target?.split('.')[1] : new URLSearchParams(body).get('Action');
  if (action !== 'SendMessage' && action !== 'SendMessageBatch') return undefined;
  const delay = (value: unknown) => {
    const seconds = Number(value ?? 0);
    return Number.isFinite(seconds) && seconds > 0 ? seconds : 0;
  };
  if (json) {
    let parsed: { QueueUrl?: unknown; DelaySeconds?: unknown; Entries?: unknown };
    try {
      parsed = JSON.parse(body) as typeof parsed;
    } catch {
      return undefined;
    }
    if (typeof parsed.QueueUrl !== 'string') return undefined;
    const entries = Array.isArray(parsed.Entries) ? (parsed.Entries as { DelaySeconds?: unknown }[]) : [];
    const delays = action === 'SendMessage' ? [delay(parsed.DelaySeconds)] : entries.map((e) => delay(e?.DelaySeconds));
    return { queueName: queueNameOf(parsed.QueueUrl), delays };
  }
  const form = new URLSearchParams(body);
  const queueUrl = form.get('QueueUrl');
  if (queueUrl === null) return undefined;
  const delays =
    action === 'SendMessage'
      ? [delay(form.get('DelaySeconds'))]
      : [...form.keys()]
          .filter((key) => /^SendMessageBatchRequestEntry\.\d+\.Id$/.test(key))
          .map((key) => delay(form.get(key.replace(/\.Id$/, '.DelaySeconds'))));
  return { queueName: queueNameOf(queueUrl), delays };
};

/** The activity of every in-process SQS emulator, read by the local pollers. */
export const queueActivity = new QueueActivity();
