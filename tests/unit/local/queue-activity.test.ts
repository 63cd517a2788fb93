// What an in-process SQS emulator tells its pollers: the sends read from a request's body (both protocols), and a
// wait that ends on the queue's next send, at once when one came since the poller's receive, or after its bound.
import { describe, expect, it } from 'vitest';
import { QueueActivity, queueNameOf, sendsOf } from '../../../local/queue-activity.js';

const QUEUE_URL = 'http://127.0.0.1:4566/000000000000/stack-dispatch';

describe('sendsOf', () => {
  it('reads the queue and each message delay of a JSON SendMessage and SendMessageBatch', () => {
    // Act
    const one = sendsOf('AmazonSQS.SendMessage', 'application/x-amz-json-1.0', JSON.stringify({ QueueUrl: QUEUE_URL }));
    const delayed = sendsOf(
      'AmazonSQS.SendMessage',
      'application/x-amz-json-1.0',
      JSON.stringify({ QueueUrl: QUEUE_URL, DelaySeconds: 10 }),
    );
    const batch = sendsOf(
      'AmazonSQS.SendMessageBatch',
      'application/x-amz-json-1.0',
      JSON.stringify({ QueueUrl: QUEUE_URL, Entries: [{ Id: 'a' }, { Id: 'b', DelaySeconds: 2 }] }),
    );
    // Assess
    expect(one).toEqual({ queueName: 'stack-dispatch', delays: [0] });
    expect(delayed).toEqual({ queueName: 'stack-dispatch', delays: [10] });
    expect(batch).toEqual({ queueName: 'stack-dispatch', delays: [0, 2] });
  });

  it('reads the query protocol form too', () => {
    const form = new URLSearchParams({
      Action: 'SendMessageBatch',
      QueueUrl: QUEUE_URL,
      'SendMessageBatchRequestEntry.1.Id': 'a',
      'SendMessageBatchRequestEntry.2.Id': 'b',
      'SendMessageBatchRequestEntry.2.DelaySeconds': '3',
    }).toString();
    expect(sendsOf(undefined, 'application/x-www-form-urlencoded', form)).toEqual({
      queueName: 'stack-dispatch',
      delays: [0, 3],
    });
  });

  it('answers nothing for other actions and for bodies it cannot read', () => {
    const receive = JSON.stringify({ QueueUrl: QUEUE_URL });
    expect(sendsOf('AmazonSQS.ReceiveMessage', 'application/x-amz-json-1.0', receive)).toBeUndefined();
    expect(sendsOf('AmazonSQS.SendMessage', 'application/x-amz-json-1.0', '{not json')).toBeUndefined();
    expect(sendsOf('AmazonSQS.SendMessage', 'application/x-amz-json-1.0', '{}')).toBeUndefined();
  });

  it('names a queue by the last segment of its URL', () => {
    expect(queueNameOf(QUEUE_URL)).toBe('stack-dispatch');
    expect(queueNameOf('stack-dispatch')).toBe('stack-dispatch');
  });
});

describe('QueueActivity', () => {
  it("ends a poller's wait on the queue's next send, not another queue's", async () => {
    // Prepare
    const activity = new QueueActivity();
    const since = activity.count('a');
    let ended = false;
    const waiting = activity.wait('a', since, 60_000).then(() => (ended = true));
    // Act
    activity.sent('b');
    await new Promise((r) => setTimeout(r, 20));
    const afterOther = ended;
    activity.sent('a');
    await waiting;
    // Assess
    expect(afterOther).toBe(false);
    expect(ended).toBe(true);
    expect(activity.count('a')).toBe(since + 1);
  });

  it('ends at once when a send came since the receive (none is missed between the receive and the wait)', async () => {
    const activity = new QueueActivity();
    const since = activity.count('a');
    activity.sent('a');
    const started = Date.now();
    await activity.wait('a', since, 60_000);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('ends after its bound, or when its signal aborts', async () => {
    const activity = new QueueActivity();
    await activity.wait('a', activity.count('a'), 10);
    const stop = new AbortController();
    const waiting = activity.wait('a', activity.count('a'), 60_000, stop.signal);
    stop.abort();
    await waiting;
    expect(activity.count('a')).toBe(0);
  });

  it('tells a delayed message when it becomes visible', async () => {
    const activity = new QueueActivity();
    const since = activity.count('a');
    activity.sent('a', 30);
    const countAtOnce = activity.count('a');
    await activity.wait('a', since, 60_000);
    expect(countAtOnce).toBe(since);
    expect(activity.count('a')).toBe(since + 1);
  });

  it('knows which queues an in-process emulator serves, until it is forgotten', () => {
    const activity = new QueueActivity();
    const forget = activity.serve((name) => name === 'mine');
    const before = [activity.serves('mine'), activity.serves('other')];
    forget();
    expect(before).toEqual([true, false]);
    expect(activity.serves('mine')).toBe(false);
  });
});
