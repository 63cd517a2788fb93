// Runs a DynamoDB Streams consumer locally the way Lambda's event-source mapping does: reads the table's stream
// (DynamoDB Local's) from LATEST when it starts, every shard, following shard splits (a closed shard's children
// are read from their start), and invokes the handler with a DynamoDBStreamEvent of each poll's records, in order.
// A batch whose handler throws is tried again (three more times, as serverless.yml's maximumRetryAttempts), then
// dropped with a log line (the cloud records it on the failure queue). It polls every POLL_MS (250 ms; 100 ms made every e2e file 30-70 % slower on a shared DynamoDB Local): Lambda polls a stream
// about four times a second, so the local stack is no slower than the cloud. After IDLE_AFTER_MS with no record it
// polls every IDLE_POLL_MS (1 s) until the next record: DynamoDB Local answers a stream read slower the more stream
// records it holds (for all its tables: ~4 ms at 5,000, ~12 ms at 40,000), and a quiet stack need not ask four
// times a second. Filter patterns are not applied here: the consumer ignores records of other items itself.
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record,
} from '@aws-sdk/client-dynamodb-streams';
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { LOCAL_CREDENTIALS } from './emulators.js';
import { lambdaContext } from './lambda-context.js';

export type StreamHandler = (event: DynamoDBStreamEvent, context: Context) => Promise<unknown>;

export interface StreamPollerOptions {
  readonly dynamo: DynamoDBClient;
  readonly endpoint: string;
  readonly tableName: string;
  readonly functionName: string;
  readonly handler: StreamHandler;
  readonly batchSize: number;
  readonly pollMs?: number;
  readonly idlePollMs?: number;
  readonly log?: (message: string) => void;
}

export interface StreamPoller {
  stop(): Promise<void>;
}

const POLL_MS = 250;
/** A stream quiet this long is polled every IDLE_POLL_MS until its next record. */
const IDLE_AFTER_MS = 5_000;
const IDLE_POLL_MS = 1_000;
/** How often the stream's shards are listed again (new shards: DynamoDB Local rolls them over). */
const DESCRIBE_MS = 10_000;
const MAX_ATTEMPTS = 4;

const toRecord = (record: _Record, streamArn: string): DynamoDBRecord =>
  ({
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion,
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    eventSourceARN: streamArn,
    dynamodb: {
      ...record.dynamodb,
      ApproximateCreationDateTime:
        record.dynamodb?.ApproximateCreationDateTime === undefined
          ? undefined
          : record.dynamodb.ApproximateCreationDateTime.getTime() / 1000,
    },
  }) as DynamoDBRecord;

export const startStreamPoller = async (options: StreamPollerOptions): Promise<StreamPoller> => {
  const log = options.log ?? (() => undefined);
  const pollMs = options.pollMs ?? POLL_MS;
  const idlePollMs = Math.max(pollMs, options.idlePollMs ?? IDLE_POLL_MS);
  let recordsAt = Date.now();
  const { Table } = await options.dynamo.send(new DescribeTableCommand({ TableName: options.tableName }));
  const streamArn = Table?.LatestStreamArn;
  if (streamArn === undefined) throw new Error(`table ${options.tableName} has no stream`);
  const streams = new DynamoDBStreamsClient({
    endpoint: options.endpoint,
    region: 'us-east-1',
    credentials: LOCAL_CREDENTIALS,
  });
  /** Open iterators by shard id; shards done (closed and read to their end) are remembered, not read again. */
  const iterators = new Map<string, string>();
  const done = new Set<string>();

  const iteratorOf = async (shardId: string, type: 'LATEST' | 'TRIM_HORIZON') =>
    (
      await streams.send(
        new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: type }),
      )
    ).ShardIterator;

  /** New shards: at start every open one from LATEST; later ones (children of a split, new ones) from their start. */
  const discover = async (first: boolean): Promise<void> => {
    let start: string | undefined;
    do {
      const { StreamDescription } = await streams.send(
        new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: start }),
      );
      for (const shard of StreamDescription?.Shards ?? []) {
        const id = shard.ShardId;
        if (id === undefined || iterators.has(id) || done.has(id)) continue;
        const closed = shard.SequenceNumberRange?.EndingSequenceNumber !== undefined;
        if (first && closed) {
          done.add(id); // history from before the stack started
          continue;
        }
        const iterator = await iteratorOf(id, first ? 'LATEST' : 'TRIM_HORIZON');
        if (iterator !== undefined) iterators.set(id, iterator);
      }
      start = StreamDescription?.LastEvaluatedShardId;
    } while (start !== undefined);
  };

  const invoke = async (records: readonly _Record[]): Promise<void> => {
    const event: DynamoDBStreamEvent = { Records: records.map((r) => toRecord(r, streamArn)) };
    for (let attempt = 1; ; attempt += 1) {
      try {
        await options.handler(event, lambdaContext(options.functionName));
        return;
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS) {
          log(`${options.functionName}: dropped ${records.length} stream records: ${(error as Error).message}`);
          return;
        }
      }
    }
  };

  let describedAt = Date.now();
  const pollShard = async (shardId: string, iterator: string): Promise<void> => {
    const { Records = [], NextShardIterator } = await streams.send(
      new GetRecordsCommand({ ShardIterator: iterator, Limit: options.batchSize }),
    );
    if (NextShardIterator === undefined) {
      // Closed and read to its end: its children (a split) are looked for at once.
      iterators.delete(shardId);
      done.add(shardId);
      describedAt = 0;
    } else iterators.set(shardId, NextShardIterator);
    if (Records.length > 0) {
      recordsAt = Date.now();
      await invoke(Records);
    }
  };

  /**
   * A shard read that fails because its iterator points at records DynamoDB Local has already trimmed (seen within
   * seconds when several stacks share one DynamoDB Local) or because it expired: the same iterator would fail forever,
   * so the shard is read again from its oldest record still kept (the records trimmed are lost, and logged).
   */
  const pollShardOrRecover = async (shardId: string, iterator: string): Promise<void> => {
    try {
      await pollShard(shardId, iterator);
    } catch (error) {
      const name = (error as { name?: string }).name;
      if (name !== 'TrimmedDataAccessException' && name !== 'ExpiredIteratorException') throw error;
      log(`${options.functionName}: ${name} on shard ${shardId}: reading it again from its oldest record`);
      const fresh = await iteratorOf(shardId, 'TRIM_HORIZON').catch(() => iteratorOf(shardId, 'LATEST'));
      if (fresh === undefined) iterators.delete(shardId);
      else iterators.set(shardId, fresh);
    }
  };

  await discover(true);
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        if (Date.now() - describedAt >= DESCRIBE_MS || iterators.size === 0) {
          await discover(false);
          describedAt = Date.now();
        }
        for (const [shardId, iterator] of [...iterators]) if (!stopped) await pollShardOrRecover(shardId, iterator);
      } catch (error) {
        if (!stopped) log(`${options.functionName}: stream read failed: ${(error as Error).message}`);
      }
      const quiet = Date.now() - recordsAt >= IDLE_AFTER_MS;
      await new Promise((resolve) => setTimeout(resolve, quiet ? idlePollMs : pollMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      streams.destroy();
    },
  };
};
