// Deployments on the single table: one item per deployment (with its plan), listed on gsi1, with a short-id alias.
// Creation happens in DynamoOrchestration.start (in the same transaction as the instance it holds).
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DeploymentRepository } from '../../domain/deployments/ports.js';
import type { Deployment } from '../../domain/deployments/types.js';
import { conditionally } from './conditional.js';
import { keys } from './keys.js';
import { findRecord, getRecord, listPartition, stripKeys, type Item } from './records.js';

export const toDeployment = (item: Item): Deployment => stripKeys<Deployment>(item);

export const deploymentItem = (deployment: Deployment) => ({
  ...keys.deployment(deployment.id),
  ...keys.deploymentsIndex(deployment.createdAt, deployment.id),
  type: 'deployment',
  ...deployment,
});

export class DynamoDeploymentRepository implements DeploymentRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(id: string): Promise<Deployment | undefined> {
    return getRecord(this.db, this.tableName, keys.deployment(id), toDeployment);
  }

  async find(idOrShortId: string): Promise<Deployment | undefined> {
    return findRecord(this.db, this.tableName, 'deployment', keys.deployment, idOrShortId, toDeployment);
  }

  async listAll(): Promise<readonly Deployment[]> {
    return listPartition(this.db, this.tableName, 'gsi1', 'DEPLOYMENTS', toDeployment);
  }

  async update(previous: Deployment, next: Deployment): Promise<boolean> {
    return conditionally(
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: deploymentItem(next),
          ConditionExpression: 'revision = :seen',
          ExpressionAttributeValues: { ':seen': previous.revision },
        }),
      ),
    );
  }
}
