// AWS SDK clients, created once per container on first use. Inside a create's request budget (request-budget.ts) the
// service's clients give each attempt 2.5 s and start no call past the budget. Endpoints come from the SDK's own variables
// (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS): `npm start` sets the per-service ones
// to the embedded emulators; pointing AWS_ENDPOINT_URL at LocalStack moves every adapter there.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DatabaseError, ServiceUnavailableError } from '../domain/errors.js';
import type { Config } from './config.js';
import { budgeted, REQUEST_BUDGET } from './request-budget.js';

const requestHandler = { connectionTimeout: 2_000, requestTimeout: 10_000 };

/** Errors a repository handles itself (conditional writes); everything else becomes a domain error. */
const PASS_THROUGH = new Set([
  'ConditionalCheckFailedException',
  'TransactionCanceledException',
  'ResourceNotFoundException',
]);

const hasHttpStatus = (error: unknown): boolean =>
  typeof (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 'number';

/**
 * How records become DynamoDB items. `convertClassInstanceToMap`: the marshaller tells a plain object by
 * `value.constructor.name === 'Object'`, so a map with an own key named `constructor` (a variable a user named so:
 * docs/security.md rule 5, member names are ordinary names) would be refused as "Unsupported type" (a 500); with it,
 * such an object is stored as the map it is. Nothing stores class instances (they were refused before).
 */
export const MARSHALL_OPTIONS = { removeUndefinedValues: true, convertClassInstanceToMap: true } as const;

/** Inside a create's budget: each attempt ends after 2.5 s (request-budget.ts), an error rather than a warning. */
const budgetHandler = {
  connectionTimeout: 1_000,
  requestTimeout: REQUEST_BUDGET.callAttemptTimeoutMs,
  throwOnRequestTimeout: true,
};

export const makeDynamoClient = (cfg: Pick<Config, 'AWS_REGION'>): DynamoDBDocumentClient =>
  budgeted(dynamoClient(cfg, requestHandler), dynamoClient(cfg, budgetHandler));

const dynamoClient = (cfg: Pick<Config, 'AWS_REGION'>, handler: object): DynamoDBDocumentClient => {
  const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: cfg.AWS_REGION, requestHandler: handler }), {
    marshallOptions: MARSHALL_OPTIONS,
  });
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if (error instanceof Error && PASS_THROUGH.has(error.name)) throw error;
        throw new DatabaseError(!hasHttpStatus(error), { cause: error });
      }
    },
    { step: 'initialize', name: 'deployerDatabaseErrors' },
  );
  return client;
};

/**
 * A plain DynamoDB client (not the document client) for Powertools' idempotency persistence layer, which marshals
 * its own items and handles its own conditional-write failures. Only the creates use it, at their start and end:
 * the SDK's 3 attempts of 2.5 s each (hard) keep those two writes inside the request's budget (request-budget.ts).
 */
export const makeDynamoBaseClient = (cfg: Pick<Config, 'AWS_REGION'>): DynamoDBClient =>
  new DynamoDBClient({
    region: cfg.AWS_REGION,
    requestHandler: budgetHandler,
  });

export const makeSqsClient = (cfg: Pick<Config, 'AWS_REGION'>): SQSClient =>
  budgeted(sqsClient(cfg, requestHandler), sqsClient(cfg, budgetHandler));

const sqsClient = (cfg: Pick<Config, 'AWS_REGION'>, handler: object): SQSClient => {
  const client = new SQSClient({ region: cfg.AWS_REGION, requestHandler: handler });
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        throw new ServiceUnavailableError('The message queue cannot be reached right now.', undefined, {
          cause: error,
        });
      }
    },
    { step: 'initialize', name: 'deployerQueueErrors' },
  );
  return client;
};
