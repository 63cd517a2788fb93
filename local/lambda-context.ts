import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

/** The context object the Lambda runtime passes to a handler, for functions run locally outside serverless-offline. */
export const lambdaContext = (functionName: string): Context => ({
  callbackWaitsForEmptyEventLoop: false,
  functionName,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
  memoryLimitInMB: '512',
  awsRequestId: randomUUID(),
  logGroupName: `/aws/lambda/${functionName}`,
  logStreamName: 'local',
  getRemainingTimeInMillis: () => 900_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
});
