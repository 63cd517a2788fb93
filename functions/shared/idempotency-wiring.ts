// Where `idempotent` routes keep their Idempotency-Key records (functions/shared/idempotency.ts): Powertools'
// DynamoDB persistence layer on the main table. Only the areas with such routes (deployments, catalog) spread this
// into their shell, so no other function's bundle holds the layer's DynamoDB calls (its role does not grant them).
import { makeDynamoBaseClient } from '../../infra/aws-clients.js';
import { dynamoIdempotencyLayer } from '../../infra/dynamodb/idempotency-store.js';
import type { IdempotencyStore } from './idempotency.js';
import { once } from './once.js';
import { infra } from './wiring.js';

/** The plain DynamoDB client Powertools' idempotency layer uses (created on the first keyed request). */
const dynamoBase = once(() => makeDynamoBaseClient(infra().config));

export const idempotentShell: { readonly idempotency: IdempotencyStore } = {
  idempotency: {
    layerFor: (userId) => dynamoIdempotencyLayer(dynamoBase(), infra().config.TABLE_NAME, userId),
  },
};
