// The table's stream records (DynamoDB Streams, NEW_AND_OLD_IMAGES) as the records the viewer channel's lists show:
// an item of a deployment, a pending request or a target, before and after its write, through the same item ->
// record mappers as the repositories. Every other item (events, connections, tombstones...) is none of the lists'.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { WrittenRecord } from '../../domain/streams/viewer-changes.js';
import { toDeployment } from './deployment-repository.js';
import { toRequest } from './pending-request-repository.js';
import type { Item } from './records.js';
import { toTarget } from './target-repository.js';

/** A stream image as the event carries it (DynamoDB's typed attribute values). */
export type StreamImage = Readonly<Record<string, AttributeValue>>;

/** The item types whose writes change a list, and their lists (also the stream's filter in serverless.yml). */
export const LISTED_ITEM_TYPES = ['deployment', 'pending_request', 'target'] as const;

const itemOf = (image: StreamImage | undefined): Item | undefined =>
  image === undefined ? undefined : (unmarshall(image as Record<string, AttributeValue>) as Item);

/** The written record of one stream record, or undefined when its item is none of a list's. */
export const writtenRecordOf = (
  oldImage: StreamImage | undefined,
  newImage: StreamImage | undefined,
): WrittenRecord | undefined => {
  const before = itemOf(oldImage);
  const after = itemOf(newImage);
  const type = (after ?? before)?.['type'];
  const mapped = <T>(map: (item: Item) => T) => ({
    ...(before === undefined ? {} : { old: map(before) }),
    ...(after === undefined ? {} : { new: map(after) }),
  });
  switch (type) {
    case 'deployment':
      return { resourceType: 'deployments', ...mapped(toDeployment) };
    case 'pending_request':
      return { resourceType: 'pending_deployments', ...mapped(toRequest) };
    case 'target':
      return { resourceType: 'targets', ...mapped(toTarget) };
    default:
      return undefined;
  }
};
