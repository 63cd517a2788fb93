// Failure analysis on the single table: one item per request (listed on gsi1, expiring 30 days after its last
// change), written only conditionally on the updatedAt read (every transition is a compare-and-set), and one item
// holding the settings' overrides.
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AnalysisRequest, AnalysisRequestRepository, AnalysisSettingsStore } from '../../domain/analysis/model.js';
import { conditionally } from './conditional.js';
import { encryptionIndex } from './encryption-index.js';
import { keys, partitions } from './keys.js';
import { getRecord, listPartition, stripKeys, type Item } from './records.js';

const KEEP_SECONDS = 30 * 86_400;

const toRequest = (item: Item): AnalysisRequest => {
  const { ttl: _ttl, ...rest } = item;
  return stripKeys<AnalysisRequest>(rest);
};

const itemOf = (request: AnalysisRequest) => ({
  ...keys.analysisRequest(request.id),
  ...keys.analysisRequestsIndex(request.createdAt, request.id),
  type: 'analysis_request',
  ...request,
  ttl: Math.ceil(Date.parse(request.updatedAt) / 1000) + KEEP_SECONDS,
});

export class DynamoAnalysisRequestRepository implements AnalysisRequestRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  create(request: AnalysisRequest): Promise<boolean> {
    return conditionally(
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: itemOf(request),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
  }

  get(id: string): Promise<AnalysisRequest | undefined> {
    return getRecord(this.db, this.tableName, keys.analysisRequest(id), toRequest);
  }

  async listAll(): Promise<readonly AnalysisRequest[]> {
    return (await listPartition(this.db, this.tableName, 'gsi1', partitions.analysisRequests, toRequest)).reverse();
  }

  update(previous: AnalysisRequest, next: AnalysisRequest): Promise<boolean> {
    return conditionally(
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: itemOf(next),
          ConditionExpression: 'updatedAt = :seen',
          ExpressionAttributeValues: { ':seen': previous.updatedAt },
        }),
      ),
    );
  }
}

export class DynamoAnalysisSettingsStore implements AnalysisSettingsStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async overrides(): Promise<Readonly<Record<string, unknown>>> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.analysisSettings(), ConsistentRead: true }),
    );
    const overrides = Item?.['overrides'];
    return typeof overrides === 'object' && overrides !== null ? (overrides as Record<string, unknown>) : {};
  }

  async save(overrides: Readonly<Record<string, unknown>>): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...keys.analysisSettings(),
          type: 'analysis_settings',
          overrides,
          ...encryptionIndex('analysis_settings', { overrides }, keys.analysisSettings()),
        },
      }),
    );
  }
}
