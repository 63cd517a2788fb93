// Deployments on the single table: one item per deployment (with its plan), listed on gsi1, with a short-id alias.
// Creation happens in DynamoOrchestration.start (in the same transaction as the instance it holds).
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DeploymentRepository } from '../../domain/deployments/ports.js';
import type { Deployment } from '../../domain/deployments/types.js';
import { resolveId } from './aliases.js';
import { conditionally } from './conditional.js';
import { keys } from './keys.js';
import { queryAll } from './query-all.js';

export const toDeployment = (item: Record<string, unknown>): Deployment => {
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, type: _t, ...deployment } = item;
  return deployment as unknown as Deployment;
};

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
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keys.deployment(id), ConsistentRead: true }));
    return Item === undefined ? undefined : toDeployment(Item);
  }

  async find(idOrShortId: string): Promise<Deployment | undefined> {
    const id = await resolveId(this.db, this.tableName, 'deployment', idOrShortId);
    return id === undefined ? undefined : this.get(id);
  }

  async listAll(): Promise<readonly Deployment[]> {
    const items = await queryAll(this.db, {
      TableName: this.tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :deployments',
      ExpressionAttributeValues: { ':deployments': 'DEPLOYMENTS' },
    });
    return items.map(toDeployment);
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
