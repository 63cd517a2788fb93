// The one SQS batch path of the four consumers: Powertools' batch processor with each body parsed by its valibot
// schema. A body that is not JSON or does not match is a batch item failure (logged), so SQS delivers it again and
// moves it to the dead-letter queue after maxReceiveCount; a record whose handler throws fails that record only.
// A batch where every record failed is answered with all of them, not thrown, as a partial batch response; the
// failures are listed in the batch's order.
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import * as v from 'valibot';
import { logger } from '../shared/logger.js';

/** Thrown by a record handler to have SQS deliver the record again (a retry asked for, not an error). */
export class RetryLater extends Error {}

export interface BatchOptions {
  /** One record after the other, in the batch's order (default: all at once). */
  readonly inOrder?: boolean;
}

const bodyOf = <S extends v.GenericSchema>(schema: S) => v.pipe(v.string(), v.parseJson(), schema);

/** The body of `record` as `schema` reads it (JSON), or throws (the record fails). */
const parseBody = <S extends v.GenericSchema>(schema: S, record: SQSRecord): v.InferOutput<S> => {
  const result = v.safeParse(bodyOf(schema), record.body);
  if (result.success) return result.output;
  const issues = v.flatten(result.issues);
  logger.error('a queue message does not parse; failed', { messageId: record.messageId, issues });
  throw new Error(`message ${record.messageId} does not parse`);
};

/**
 * An SQS handler that hands each record's parsed body to `handle`, and answers the records whose body does not
 * parse or whose `handle` threw as batch item failures.
 */
export const sqsBatch =
  <S extends v.GenericSchema>(
    schema: S,
    handle: (message: v.InferOutput<S>, record: SQSRecord) => Promise<void>,
    options: BatchOptions = {},
  ) =>
  async (event: SQSEvent, context?: Context): Promise<SQSBatchResponse> => {
    const response = await processPartialResponse(
      event,
      async (record: SQSRecord) => handle(parseBody(schema, record), record),
      new BatchProcessor(EventType.SQS),
      {
        ...(context === undefined ? {} : { context }),
        throwOnFullBatchFailure: false,
        processInParallel: options.inOrder !== true,
      },
    );
    const order = new Map(event.Records.map((record, index) => [record.messageId, index]));
    return {
      batchItemFailures: [...response.batchItemFailures].sort(
        (a, b) => (order.get(a.itemIdentifier) ?? 0) - (order.get(b.itemIdentifier) ?? 0),
      ),
    };
  };

/**
 * An SQS handler that runs `handle` once per group of records (the parsed messages with one `keyOf`), all at once;
 * every record of a group whose run threw is a batch item failure, as is every record whose body does not parse.
 */
export const sqsGroupedBatch =
  <S extends v.GenericSchema>(
    schema: S,
    keyOf: (message: v.InferOutput<S>) => string,
    handle: (messages: readonly v.InferOutput<S>[]) => Promise<void>,
  ) =>
  (event: SQSEvent, context?: Context): Promise<SQSBatchResponse> => {
    const groups = new Map<string, { messages: v.InferOutput<S>[]; run?: Promise<void> }>();
    for (const record of event.Records) {
      const parsed = v.safeParse(bodyOf(schema), record.body);
      if (!parsed.success) continue; // fails with its issues logged in the batch below
      const key = keyOf(parsed.output);
      const group = groups.get(key) ?? { messages: [] };
      group.messages.push(parsed.output);
      groups.set(key, group);
    }
    return sqsBatch(schema, (message) => {
      const group = groups.get(keyOf(message))!;
      return (group.run ??= handle(group.messages));
    })(event, context);
  };
