// Events and contexts as API Gateway (HTTP API, payload 2.0) and Lambda hand them to a handler.
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { lambdaContext as localLambdaContext } from '../../local/lambda-context.js';

export const lambdaContext = (): Context => localLambdaContext('test');

export const httpEvent = (
  method: string,
  path: string,
  options: { body?: string; query?: Record<string, string>; headers?: Record<string, string>; base64?: boolean } = {},
): APIGatewayProxyEventV2 => ({
  version: '2.0',
  routeKey: `${method} ${path}`,
  rawPath: path,
  rawQueryString: new URLSearchParams(options.query ?? {}).toString(),
  headers: options.headers ?? {},
  queryStringParameters: options.query,
  requestContext: {
    accountId: '000000000000',
    apiId: 'test',
    domainName: 'localhost',
    domainPrefix: 'localhost',
    http: { method, path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'vitest' },
    requestId: 'api-gateway-id',
    routeKey: `${method} ${path}`,
    stage: '$default',
    time: new Date().toISOString(),
    timeEpoch: Date.now(),
  },
  body: options.base64 && options.body !== undefined ? Buffer.from(options.body).toString('base64') : options.body,
  isBase64Encoded: options.base64 ?? false,
});

export interface ParsedResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  readonly raw: string;
}

export const parseResponse = (response: {
  statusCode?: number;
  headers?: Record<string, unknown>;
  body?: string;
}): ParsedResponse => {
  const raw = response.body ?? '';
  let json: unknown;
  try {
    json = raw === '' ? undefined : JSON.parse(raw);
  } catch {
    json = undefined;
  }
  return {
    statusCode: response.statusCode ?? 0,
    headers: (response.headers ?? {}) as Record<string, string>,
    json,
    raw,
  };
};
