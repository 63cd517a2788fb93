// Runs an SQS consumer function locally the way Lambda's event-source mapping does: long-polls the queue,
// gathers up to `batchSize` messages (within the batching window), invokes the handler with an SQSEvent, then
// deletes the messages that succeeded: all of them when the handler returns, none when it throws, all but
// the `batchItemFailures` when it reports them. Messages left behind reappear after the visibility timeout,
// and the queue's own redrive policy moves them to the dead-letter queue after maxReceiveCount receives.
//
// It short-polls (WaitTimeSeconds 0) because local-aws-sqs's long poll waits out the whole wait time to fill a batch
// and meanwhile re-adds messages whose visibility expired to the same response: Lambda's long poll gets messages as
// soon as they arrive, each once per receive. When its queue is empty it waits: for the next message sent, when the
// emulator runs in this process (local/queue-activity.ts; at most IDLE_CHECK_MS), else IDLE_MS.
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { lambdaContext } from './lambda-context.js';
import { IDLE_CHECK_MS, queueActivity, queueNameOf } from './queue-activity.js';

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

export interface PollerOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly functionName: string;
  readonly handler: SqsHandler;
  readonly batchSize: number;
  readonly maximumBatchingWindowSeconds: number;
  readonly reportBatchItemFailures: boolean;
  readonly log?: (message: string) => void;
}

/** The pause after an empty receive when the queue's emulator is not in this process. */
const IDLE_MS = 50;

export interface Poller {
  stop(): Promise<void>;
}

const toRecord = (message: Message, queueArn: string): SQSRecord => ({
  messageId: message.MessageId ?? '',
  receiptHandle: message.ReceiptHandle ?? '',
  body: message.Body ?? '',
  attributes: {
    ApproximateReceiveCount: message.Attributes?.['ApproximateReceiveCount'] ?? '1',
    SentTimestamp: message.Attributes?.['SentTimestamp'] ?? String(Date.now()),
    SenderId: message.Attributes?.['SenderId'] ?? 'local',
    ApproximateFirstReceiveTimestamp: message.Attributes?.['ApproximateFirstReceiveTimestamp'] ?? String(Date.now()),
    ...(message.Attributes?.['MessageGroupId'] === undefined
      ? {}
      : { MessageGroupId: message.Attributes['MessageGroupId'] }),
    ...(message.Attributes?.['MessageDeduplicationId'] === undefined
      ? {}
      : { MessageDeduplicationId: message.Attributes['MessageDeduplicationId'] }),
  },
  messageAttributes: Object.fromEntries(
    Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
      name,
      {
        stringValue: value.StringValue,
        dataType: value.DataType ?? 'String',
        stringListValues: [],
        binaryListValues: [],
      },
    ]),
  ),
  md5OfBody: message.MD5OfBody ?? '',
  eventSource: 'aws:sqs',
  eventSourceARN: queueArn,
  awsRegion: queueArn.split(':')[3] ?? 'us-east-1',
});

export const startPoller = (options: PollerOptions): Poller => {
  const { sqs, queueUrl } = options;
  const log = options.log ?? (() => undefined);
  const abort = new AbortController();
  let stopped = false;

  const receive = async (max: number): Promise<Message[]> => {
    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(10, max),
        WaitTimeSeconds: 0,
        // local-aws-sqs reads only the older AttributeNames; AWS accepts both.
        AttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: abort.signal },
    );
    return Messages ?? [];
  };

  const queueName = queueNameOf(queueUrl);
  const told = queueActivity.serves(queueName);

  const gatherBatch = async (): Promise<Message[]> => {
    const batch = new Map<string, Message>();
    const add = (messages: Message[]) => messages.forEach((m) => batch.set(m.MessageId ?? '', m));
    // Sends told before the receive are in its answer; one told after it ends the wait at once.
    const sends = queueActivity.count(queueName);
    add(await receive(options.batchSize));
    if (batch.size === 0) {
      if (told) await queueActivity.wait(queueName, sends, IDLE_CHECK_MS, abort.signal);
      else await new Promise((r) => setTimeout(r, IDLE_MS));
      return [];
    }
    const deadline = Date.now() + options.maximumBatchingWindowSeconds * 1000;
    while (batch.size < options.batchSize && Date.now() < deadline && !stopped) {
      const more = await receive(options.batchSize - batch.size);
      if (more.length === 0) await new Promise((r) => setTimeout(r, IDLE_MS));
      add(more);
    }
    return [...batch.values()];
  };

  const succeeded = async (batch: readonly Message[]): Promise<void> => {
    for (let i = 0; i < batch.length; i += 10) {
      const slice = batch.slice(i, i + 10);
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: slice.map((m, index) => ({ Id: String(index), ReceiptHandle: m.ReceiptHandle ?? '' })),
        }),
      );
    }
  };

  const invoke = async (batch: Message[]): Promise<void> => {
    const event: SQSEvent = { Records: batch.map((m) => toRecord(m, options.queueArn)) };
    let response: SQSBatchResponse | void;
    try {
      response = await options.handler(event, lambdaContext(options.functionName));
    } catch (error) {
      log(
        `${options.functionName}: batch of ${batch.length} failed, messages return after the visibility timeout: ${(error as Error).message}`,
      );
      return;
    }
    const failed = new Set(
      options.reportBatchItemFailures && response ? response.batchItemFailures.map((f) => f.itemIdentifier) : [],
    );
    // Each reported failure is logged with its receive count: a poison message's way to the dead-letter queue
    // (after maxReceiveCount receives) can be followed, and the handler's own log line says why it failed.
    for (const m of batch)
      if (failed.has(m.MessageId ?? ''))
        log(
          `${options.functionName}: message ${m.MessageId} failed (receive ${m.Attributes?.ApproximateReceiveCount ?? '?'}); it returns after the visibility timeout, and goes to the dead-letter queue after maxReceiveCount receives`,
        );
    await succeeded(batch.filter((m) => !failed.has(m.MessageId ?? '')));
  };

  const loop = (async () => {
    while (!stopped) {
      try {
        const batch = await gatherBatch();
        if (batch.length > 0) await invoke(batch);
      } catch (error) {
        if (stopped) break;
        log(`${options.functionName}: polling failed: ${(error as Error).message}`);
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  })();

  return {
    stop: async () => {
      stopped = true;
      abort.abort();
      await loop;
    },
  };
};
