// The one SQS batch path: bodies parsed by their schema, a body that does not parse or a handler that throws fails
// that record only (never the batch), failures in the batch's order, grouped runs shared by their records.
import type { SQSEvent } from 'aws-lambda';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { RetryLater, sqsBatch, sqsGroupedBatch } from '../../../../functions/queues/batch.js';

const batch = (...bodies: string[]): SQSEvent =>
  ({ Records: bodies.map((body, i) => ({ messageId: `m${i + 1}`, body })) }) as unknown as SQSEvent;
const Message = v.object({ id: v.string(), n: v.optional(v.number(), 0) });

describe('sqsBatch', () => {
  it('hands each parsed body to the handler and reports the records that do not parse or throw, in order', async () => {
    // Prepare
    const seen: unknown[] = [];
    const handler = sqsBatch(Message, async (message) => {
      if (message.id === 'slow') await new Promise((r) => setTimeout(r, 20));
      if (message.id !== 'ok') throw new RetryLater(message.id);
      seen.push(message);
    });
    // Act
    const response = await handler(batch('{"id":"slow"}', '{"id":"ok"}', 'not json', '{"id":1}', '{"id":"no"}'));
    // Assess
    expect(response).toEqual({
      batchItemFailures: [
        { itemIdentifier: 'm1' },
        { itemIdentifier: 'm3' },
        { itemIdentifier: 'm4' },
        { itemIdentifier: 'm5' },
      ],
    });
    expect(seen).toEqual([{ id: 'ok', n: 0 }]);
  });

  it('answers a batch where every record failed with all of them instead of throwing', async () => {
    // Act
    const response = await sqsBatch(Message, async () => undefined)(batch('{', '[]'));
    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }, { itemIdentifier: 'm2' }] });
  });

  it('handles the records one after the other when asked to keep their order', async () => {
    // Prepare
    const seen: string[] = [];
    const handler = sqsBatch(
      Message,
      async (message) => {
        if (message.id === 'a') await new Promise((r) => setTimeout(r, 20));
        seen.push(message.id);
      },
      { inOrder: true },
    );
    // Act
    await handler(batch('{"id":"a"}', '{"id":"b"}'));
    // Assess
    expect(seen).toEqual(['a', 'b']);
  });
});

describe('sqsGroupedBatch', () => {
  it('runs once per group with all its messages, and fails every record of a group whose run threw', async () => {
    // Prepare
    const runs: (readonly { id: string; n: number }[])[] = [];
    const handler = sqsGroupedBatch(
      Message,
      (message) => message.id,
      async (messages) => {
        runs.push(messages);
        if (messages[0]!.id === 'bad') throw new Error('down');
      },
    );
    // Act
    const response = await handler(batch('{"id":"a","n":1}', '{"id":"bad"}', '{"id":"a","n":2}', '{"id":"bad"}', '{'));
    // Assess
    expect(runs).toEqual([
      [
        { id: 'a', n: 1 },
        { id: 'a', n: 2 },
      ],
      [
        { id: 'bad', n: 0 },
        { id: 'bad', n: 0 },
      ],
    ]);
    expect(response).toEqual({
      batchItemFailures: [{ itemIdentifier: 'm2' }, { itemIdentifier: 'm4' }, { itemIdentifier: 'm5' }],
    });
  });
});
