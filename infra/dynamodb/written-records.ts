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

/**
 * An attribute value with no member (seen from DynamoDB Local's stream through the streams client, e.g. for an empty
 * value) is dropped, at any depth, rather than failing the whole batch: unmarshall refuses it.
 */
const defined = (value: AttributeValue): AttributeValue | undefined => {
  if (Object.keys(value).length === 0) return undefined;
  if (value.M !== undefined) return { M: definedMap(value.M) };
  if (value.L !== undefined) return { L: value.L.map(defined).filter((v): v is AttributeValue => v !== undefined) };
  return value;
};
const definedMap = (map: Readonly<Record<string, AttributeValue>>): Record<string, AttributeValue> =>
  Object.fromEntries(
    Object.entries(map).flatMap(([name, value]) => {
      const kept = defined(value);
      return kept === undefined ? [] : [[name, kept]];
    }),
  );

const itemOf = (image: StreamImage | undefined): Item | undefined =>
  image === undefined ? undefined : (unmarshall(definedMap(image)) as Item);

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
