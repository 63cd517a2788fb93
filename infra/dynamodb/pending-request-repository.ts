// Pending dispatch requests: one item each, every one on gsi2 (the list), and on gsi1 while pending (the dispatch
// order: highest priority, then oldest). Each status change is a conditional update that also adds or removes the
// gsi1 entry, so the queue holds exactly the pending requests. While processing, gsi1 holds the request under
// PENDINGPROCESSING instead (oldest claim first), so the recovery of requests stuck there reads only those.
import {
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { PendingRequestRepository } from '../../domain/deployments/ports.js';
import { CreateClaimedError } from '../../domain/deployments/start.js';
import type { CreateClaim, PendingRequest } from '../../domain/deployments/types.js';
import { conditionally, readBack } from './conditional.js';
import { claimItem } from './create-claims.js';
import { encryptionIndex } from './encryption-index.js';
import { keys, partitions } from './keys.js';
import { packSteps, unpackSteps } from './packed-steps.js';
import { getRecord, listPartition, stripKeys, type Item } from './records.js';
import { failedAt } from './transactions.js';

/** A request's item: its draft's plan steps packed (packed-steps.ts). */
export const toRequest = (item: Item): PendingRequest =>
  stripKeys<PendingRequest>(
    item['draft'] === undefined ? item : { ...item, draft: unpackSteps(item['draft'] as Item) },
  );

/** The values of `SET gsi3pk = :c3pk, gsi3sk = :c3sk`: a write of the request is a change, at this moment. */
export const changedValues = (id: string) => {
  const changed = keys.changed('pending_deployments', new Date().toISOString(), id);
  return { ':c3pk': changed.gsi3pk, ':c3sk': changed.gsi3sk };
};

export class DynamoPendingRequestRepository implements PendingRequestRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(request: PendingRequest, claim?: CreateClaim): Promise<void> {
    const put = {
      TableName: this.tableName,
      Item: {
        ...keys.pendingRequest(request.id),
        ...keys.pendingQueue(request.priority, request.queuedAt, request.id),
        ...keys.pendingRequestsIndex(request.createdAt, request.id),
        ...keys.changed('pending_deployments', new Date().toISOString(), request.id),
        type: 'pending_request',
        ...request,
        draft: packSteps(request.draft),
        ...encryptionIndex('pending_request', request, keys.pendingRequest(request.id)),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    };
    try {
      if (claim === undefined) await this.db.send(new PutCommand(put));
      else
        await this.db.send(
          new TransactWriteCommand({
            TransactItems: [{ Put: put }, claimItem(this.tableName, claim, { kind: 'request', id: request.id })],
          }),
        );
    } catch (error) {
      // The key claimed by another create (and this request not stored by an earlier attempt): nothing stored.
      if (claim !== undefined && failedAt(error, 1) && !failedAt(error, 0)) throw new CreateClaimedError(claim.scope);
      // The answer lost after the write applied (or the SDK's retry met the first attempt's item, the id being new):
      // stored, so committed, not failed.
      if ((await readBack(error, () => this.get(request.id))) === undefined) throw error;
    }
  }

  async get(id: string): Promise<PendingRequest | undefined> {
    return getRecord(this.db, this.tableName, keys.pendingRequest(id), toRequest);
  }

  async listAll(): Promise<readonly PendingRequest[]> {
    return listPartition(this.db, this.tableName, 'gsi2', partitions.pendingRequests, toRequest);
  }

  async queue(limit: number): Promise<readonly PendingRequest[]> {
    const { Items = [] } = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :queue',
        ExpressionAttributeValues: { ':queue': partitions.pendingQueue },
        Limit: limit,
      }),
    );
    return Items.map(toRequest);
  }

  async position(request: PendingRequest): Promise<number | undefined> {
    const own = keys.pendingQueue(request.priority, request.queuedAt, request.id).gsi1sk;
    let ahead = 0;
    let start: Record<string, unknown> | undefined;
    do {
      // The requests up to and including this one, in dispatch order: counted, not read (a COUNT reads no items out).
      const page = await this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :queue AND gsi1sk <= :own',
          ExpressionAttributeValues: { ':queue': partitions.pendingQueue, ':own': own },
          Select: 'COUNT',
          ExclusiveStartKey: start,
        }),
      );
      ahead += page.Count ?? 0;
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    return ahead > 0 ? ahead : undefined;
  }

  async claim(request: PendingRequest, at: Date): Promise<boolean> {
    const processing = keys.pendingProcessing(at.toISOString(), request.id);
    return this.move(request, 'pending', 'SET #status = :to, processingSince = :at, gsi1pk = :g1, gsi1sk = :g2', {
      ':to': 'processing',
      ':at': at.toISOString(),
      ':g1': processing.gsi1pk,
      ':g2': processing.gsi1sk,
    });
  }

  async processing(limit: number): Promise<readonly PendingRequest[]> {
    const { Items = [] } = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :processing',
        ExpressionAttributeValues: { ':processing': keys.pendingProcessing('', '').gsi1pk },
        Limit: limit,
      }),
    );
    return Items.map(toRequest);
  }

  async setWaiting(request: PendingRequest, reason: string | null, until: string | null): Promise<boolean> {
    return this.move(request, 'pending', 'SET waitingReason = :reason, waitingUntil = :until', {
      ':reason': reason,
      ':until': until,
    });
  }

  async release(
    request: PendingRequest,
    error: { readonly message: string; readonly at: Date } | undefined,
  ): Promise<boolean> {
    const queue = keys.pendingQueue(request.priority, request.queuedAt, request.id);
    const base = { ':to': 'pending', ':g1': queue.gsi1pk, ':g2': queue.gsi1sk, ':null': null };
    return error === undefined
      ? this.move(request, 'processing', 'SET #status = :to, gsi1pk = :g1, gsi1sk = :g2, processingSince = :null', base)
      : this.move(
          request,
          'processing',
          'SET #status = :to, gsi1pk = :g1, gsi1sk = :g2, processingSince = :null, errorMessage = :error, lastRetryAt = :at ADD retryCount :one',
          { ...base, ':error': error.message, ':at': error.at.toISOString(), ':one': 1 },
        );
  }

  async fail(request: PendingRequest, message: string, at: Date): Promise<boolean> {
    return this.move(
      request,
      'processing',
      'SET #status = :to, errorMessage = :error, lastRetryAt = :at, processingSince = :null ADD retryCount :one REMOVE gsi1pk, gsi1sk',
      {
        ':to': 'failed',
        ':error': message,
        ':at': at.toISOString(),
        ':one': 1,
        ':null': null,
      },
    );
  }

  async cancel(request: PendingRequest, at: Date): Promise<boolean> {
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.pendingRequest(request.id),
          UpdateExpression:
            'SET #status = :cancelled, cancelledAt = :at, processingSince = :null, gsi3pk = :c3pk, gsi3sk = :c3sk REMOVE gsi1pk, gsi1sk',
          ConditionExpression: '#status IN (:pending, :processing)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':cancelled': 'cancelled',
            ':at': at.toISOString(),
            ':pending': 'pending',
            ':processing': 'processing',
            ':null': null,
            ...changedValues(request.id),
          },
        }),
      ),
    );
  }

  private move(
    request: PendingRequest,
    from: string,
    update: string,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.pendingRequest(request.id),
          UpdateExpression: `${update.replace(/^SET /, 'SET gsi3pk = :c3pk, gsi3sk = :c3sk, ')}`,
          ConditionExpression: '#status = :from',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ...values, ...changedValues(request.id), ':from': from },
        }),
      ),
    );
  }
}
