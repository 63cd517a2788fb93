// The local event-source mapping against the real SQS emulator: success, whole-batch failure, partial batch
// failures, and redrive of a poison message to the dead-letter queue; and, with the emulator in this process (as
// every local stack runs it), an idle queue that is not polled over and over.
import { ReceiveMessageCommand, SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureQueues } from '../../../local/bootstrap.js';
import { startSqs, type Emulator } from '../../../local/emulators.js';
import { startPoller, type Poller } from '../../../local/poller.js';
import { sqsClient, uniqueName } from '../../support/aws.js';

const sqs = sqsClient();
let poller: Poller | undefined;

afterEach(async () => {
  await poller?.stop();
  poller = undefined;
});

const queuesWith = async (maxReceiveCount: number, client = sqs) => {
  const prefix = uniqueName('poll');
  return ensureQueues(
    client,
    [
      {
        logicalId: 'Q',
        name: 'q',
        attributes: { VisibilityTimeout: '1' },
        deadLetter: { logicalId: 'Dlq', maxReceiveCount },
      },
      { logicalId: 'Dlq', name: 'dlq', attributes: {}, deadLetter: undefined },
    ],
    (q) => `${prefix}-${q.name}`,
  );
};

const until = async (condition: () => boolean, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
};

const start = (
  queue: { url: string; arn: string },
  handler: (event: SQSEvent) => Promise<SQSBatchResponse | void>,
  batchSize = 10,
  log?: (line: string) => void,
  client = sqs,
) =>
  startPoller({
    ...(log === undefined ? {} : { log }),
    sqs: client,
    queueUrl: queue.url,
    queueArn: queue.arn,
    functionName: 'test-consumer',
    handler,
    batchSize,
    maximumBatchingWindowSeconds: 0,
    reportBatchItemFailures: true,
  });

describe('local SQS poller', () => {
  it('delivers batches as Lambda does and deletes handled messages', async () => {
    // Prepare
    const queues = await queuesWith(3);
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queues['Q']!.url,
        Entries: ['a', 'b', 'c'].map((id) => ({ Id: id, MessageBody: id })),
      }),
    );
    const seen: string[] = [];
    let sample: SQSEvent | undefined;
    // Act
    poller = start(queues['Q']!, async (event) => {
      sample ??= event;
      seen.push(...event.Records.map((r) => r.body));
    });
    await until(() => seen.length >= 3);
    await new Promise((r) => setTimeout(r, 1_500)); // past the visibility timeout: nothing comes back
    // Assess
    expect(seen.sort()).toEqual(['a', 'b', 'c']);
    expect(sample?.Records[0]).toMatchObject({
      eventSource: 'aws:sqs',
      eventSourceARN: queues['Q']!.arn,
      attributes: { ApproximateReceiveCount: '1' },
    });
  });

  it('redelivers only the messages a handler reports as failed', async () => {
    const queues = await queuesWith(5);
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queues['Q']!.url,
        Entries: ['ok', 'flaky'].map((id) => ({ Id: id, MessageBody: id })),
      }),
    );
    const deliveries: string[] = [];
    poller = start(queues['Q']!, async (event) => {
      deliveries.push(...event.Records.map((r) => `${r.body}#${r.attributes.ApproximateReceiveCount}`));
      const flaky = event.Records.filter((r) => r.body === 'flaky' && r.attributes.ApproximateReceiveCount === '1');
      return { batchItemFailures: flaky.map((r) => ({ itemIdentifier: r.messageId })) };
    });
    await until(() => deliveries.includes('flaky#2'));
    await new Promise((r) => setTimeout(r, 1_500));
    expect(deliveries.sort()).toEqual(['flaky#1', 'flaky#2', 'ok#1']);
  });

  it('redelivers the whole batch when the handler throws', async () => {
    const queues = await queuesWith(5);
    await sqs.send(new SendMessageCommand({ QueueUrl: queues['Q']!.url, MessageBody: 'retry-me' }));
    let calls = 0;
    poller = start(queues['Q']!, async () => {
      calls += 1;
      if (calls === 1) throw new Error('transient');
    });
    await until(() => calls >= 2);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(calls).toBe(2);
  });

  it('moves a message that always fails to the dead-letter queue after maxReceiveCount receives', async () => {
    const queues = await queuesWith(2);
    await sqs.send(new SendMessageCommand({ QueueUrl: queues['Q']!.url, MessageBody: 'poison' }));
    let attempts = 0;
    poller = start(queues['Q']!, async () => {
      attempts += 1;
      throw new Error('always');
    });
    let dead: string | undefined;
    await until(() => attempts >= 2);
    const deadline = Date.now() + 10_000;
    while (dead === undefined && Date.now() < deadline) {
      const { Messages } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queues['Dlq']!.url, WaitTimeSeconds: 1 }),
      );
      dead = Messages?.[0]?.Body;
    }
    expect(dead).toBe('poison');
    expect(attempts).toBe(2);
  });

  it('moves a message a consumer keeps reporting as failed to the dead-letter queue, logging each failed receive', async () => {
    // Prepare
    const queues = await queuesWith(2);
    await sqs.send(new SendMessageCommand({ QueueUrl: queues['Q']!.url, MessageBody: 'poison' }));
    const lines: string[] = [];
    let attempts = 0;
    // Act: the consumer reports the message failed (as every consumer does, per message)
    poller = start(
      queues['Q']!,
      async (event) => {
        attempts += 1;
        return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
      },
      10,
      (line) => lines.push(line),
    );
    await until(() => attempts >= 2);
    let dead: string | undefined;
    const deadline = Date.now() + 10_000;
    while (dead === undefined && Date.now() < deadline) {
      const { Messages } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queues['Dlq']!.url, WaitTimeSeconds: 1 }),
      );
      dead = Messages?.[0]?.Body;
    }
    // Assess
    expect(dead).toBe('poison');
    expect(attempts).toBe(2);
    expect(lines).toEqual([
      expect.stringMatching(/test-consumer: message \S+ failed \(receive 1\).*dead-letter queue/),
      expect.stringMatching(/test-consumer: message \S+ failed \(receive 2\)/),
    ]);
  });
});

describe('local SQS poller, the emulator in this process', () => {
  let emulator: Emulator;
  let local: ReturnType<typeof sqsClient>;
  /** The ReceiveMessage calls the poller made. */
  let receives = 0;

  beforeAll(async () => {
    emulator = await startSqs({ port: 0 });
    local = sqsClient(emulator.endpoint);
    local.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'ReceiveMessageCommand') receives += 1;
        return next(args);
      },
      { step: 'initialize' },
    );
  });
  afterAll(async () => {
    local.destroy();
    await emulator.stop();
  });

  it('waits for a message instead of asking the idle queue over and over, and takes each one sent', async () => {
    // Prepare
    const queues = await queuesWith(3, local);
    const seen: string[] = [];
    poller = start(
      queues['Q']!,
      async (event) => void seen.push(...event.Records.map((r) => r.body)),
      10,
      undefined,
      local,
    );
    await new Promise((r) => setTimeout(r, 200));
    // Act: two idle seconds, then three sends, one with a delay
    const before = receives;
    await new Promise((r) => setTimeout(r, 2_000));
    const idleReceives = receives - before;
    await local.send(new SendMessageCommand({ QueueUrl: queues['Q']!.url, MessageBody: 'one' }));
    await until(() => seen.includes('one'));
    await local.send(new SendMessageCommand({ QueueUrl: queues['Q']!.url, MessageBody: 'two' }));
    await local.send(new SendMessageCommand({ QueueUrl: queues['Q']!.url, MessageBody: 'later', DelaySeconds: 1 }));
    await until(() => seen.includes('later'));
    // Assess: polling every 50 ms would have asked ~40 times; one check a second at most
    expect(idleReceives).toBeLessThanOrEqual(4);
    expect(seen.sort()).toEqual(['later', 'one', 'two']);
  });

  it('takes back a message whose batch failed once its visibility timeout ran out, with no send to wake it', async () => {
    const queues = await queuesWith(5, local);
    await local.send(new SendMessageCommand({ QueueUrl: queues['Q']!.url, MessageBody: 'retry-me' }));
    let calls = 0;
    poller = start(
      queues['Q']!,
      async () => {
        calls += 1;
        if (calls === 1) throw new Error('transient');
      },
      10,
      () => undefined,
      local,
    );
    await until(() => calls >= 2);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(calls).toBe(2);
  });
});
