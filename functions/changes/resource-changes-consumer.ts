// table stream -> pushResourceChanges (domain/streams/viewer-changes.ts) -> viewer registry + @connections
//
// The consumer of the table's DynamoDB stream (NEW_AND_OLD_IMAGES; serverless.yml filters it to the items of
// deployments, pending requests and targets): each batch of written records becomes the list changes the viewers of
// those lists are sent, one `changes` message per connection and resource. A failure to read the subscribers throws,
// so Lambda retries the batch (bisected) and finally records it on the failure queue; a failed send is only logged.
// Locally local/stream-poller.ts reads DynamoDB Local's stream and calls this handler.
import '../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import type { DynamoDBStreamEvent } from 'aws-lambda';
import {
  pushResourceChanges,
  type ViewerChangesDeps,
  type WrittenRecord,
} from '../../domain/streams/viewer-changes.js';
import { writtenRecordOf, type StreamImage } from '../../infra/dynamodb/written-records.js';
import { logger } from '../shared/logger.js';
import { resourceChangesDeps } from '../shared/viewer-push-wiring.js';

export const makeHandler =
  (deps: () => ViewerChangesDeps | undefined) =>
  async (event: DynamoDBStreamEvent): Promise<void> => {
    const channel = deps();
    if (channel === undefined) return;
    const batch = event.Records.flatMap((record): WrittenRecord[] => {
      const written = writtenRecordOf(
        record.dynamodb?.OldImage as StreamImage | undefined,
        record.dynamodb?.NewImage as StreamImage | undefined,
      );
      return written === undefined ? [] : [written];
    });
    if (batch.length === 0) return;
    try {
      await pushResourceChanges(channel, batch);
    } catch (error) {
      logger.error('resource changes: push failed', { records: event.Records.length, error });
      throw error;
    }
  };

export const handler = makeHandler(resourceChangesDeps);
