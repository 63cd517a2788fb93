// The stack `npm start` runs, driven over HTTP as a user would.
import { AGENT_VERSION } from '../../agent/version.js';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentedRoutes } from '../../functions/http/routes.js';
import { buildOpenApi } from '../../functions/shared/openapi.js';
import { LOCAL_CREDENTIALS } from '../../local/emulators.js';
import { startStack, type Stack } from '../../local/stack.js';
import pkg from '../../package.json' with { type: 'json' };
import { uniqueName } from '../support/aws.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ port: 0, namePrefix: `${uniqueName('e2e')}-` });
});

afterAll(async () => {
  await stack?.stop();
});

const get = async (path: string, init?: RequestInit) => {
  const response = await fetch(`${stack.baseUrl}${path}`, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: text === '' ? undefined : JSON.parse(text) };
};

describe('the local stack over HTTP', () => {
  it('reports health with DynamoDB and SQS up', async () => {
    const health = await get('/api/v1/health');
    expect(health.status).toBe(200);
    expect(health.json).toMatchObject({
      status: 'ok',
      dependencies: { dynamodb: { status: 'up' }, sqs: { status: 'up' } },
    });
    const ready = await get('/api/v1/health/ready');
    expect(ready.status).toBe(200);
  });

  it('reports the server version from package.json, and the version of the agent its front serves', async () => {
    const info = await get('/api/v1/server/info');
    expect(stack.programs.agent?.version).toBe(AGENT_VERSION);
    expect(info.json).toEqual({
      server_version: pkg.version,
      api_version: '1.0.0',
      service: 'deployer',
      engine_version: pkg.version,
      agent_versions: '>=1.0.0 <2.0.0',
      agent_version: AGENT_VERSION,
    });
  });

  it('answers unknown paths and methods with the NOT_FOUND envelope and a unique request id', async () => {
    const unknown = await get('/api/v1/no-such-thing');
    const wrongMethod = await get('/api/v1/health', { method: 'DELETE' });
    const outside = await get('/robots.txt'); // a path no file and no function answers
    for (const response of [unknown, wrongMethod, outside]) {
      expect(response.status).toBe(404);
      expect(response.json.error.code).toBe('NOT_FOUND');
      expect(response.headers.get('content-type')).toContain('application/json');
    }
    expect(unknown.headers.get('x-request-id')).toMatch(/.{8,}/);
    expect(unknown.headers.get('x-request-id')).not.toBe(wrongMethod.headers.get('x-request-id'));
  });

  it('sends stream paths to the streaming function on the same origin', async () => {
    const response = await get('/api/v1/sse/no-such-stream');
    expect(response.status).toBe(404);
    expect(response.json.error.code).toBe('NOT_FOUND');
  });

  it('serves a valid OpenAPI 3.1 document listing every endpoint', async () => {
    const doc = await get('/api/v1/openapi.json');
    expect(doc.status).toBe(200);
    const result = await new Validator().validate(doc.json);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    for (const route of documentedRoutes()) {
      expect(doc.json.paths[route.path]?.[route.method.toLowerCase()]?.operationId).toBe(
        route.handler.spec.operationId,
      );
    }
    // The e2e client checks answers against the document built in process (tests/support/openapi-conformance.ts):
    // it is the served one.
    expect(doc.json).toEqual(buildOpenApi(documentedRoutes(), { version: pkg.version }));
  });
});

describe('the API documentation page', () => {
  it('renders every operation of the document as one self-contained page with no script', async () => {
    // Act
    const response = await fetch(`${stack.baseUrl}/api/v1/docs`);
    const html = await response.text();
    // Assess
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(html).not.toMatch(/<script|<link|src=|@import|url\(/i);
    for (const route of documentedRoutes()) expect(html).toContain(`id="${route.handler.spec.operationId}"`);
  });
});

describe('local data', () => {
  it('survives a restart when kept on disk', async () => {
    // Prepare
    const dataDir = await mkdtemp(join(tmpdir(), 'deployer-data-'));
    const namePrefix = `${uniqueName('persist')}-`;
    const table = (s: Stack) => s.tables['MainTable']!;
    const db = (s: Stack) =>
      DynamoDBDocumentClient.from(
        new DynamoDBClient({ endpoint: s.dynamoEndpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS }),
      );
    // Act
    const first = await startStack({ port: 0, dataDir, namePrefix });
    await db(first).send(new PutCommand({ TableName: table(first), Item: { pk: 'KEEP', sk: 'ME', value: 42 } }));
    await first.stop();
    const second = await startStack({ port: 0, dataDir, namePrefix });
    try {
      // Assess
      const { Item } = await db(second).send(
        new GetCommand({ TableName: table(second), Key: { pk: 'KEEP', sk: 'ME' } }),
      );
      expect(Item).toEqual({ pk: 'KEEP', sk: 'ME', value: 42 });
      expect((await fetch(`${second.baseUrl}/api/v1/health`)).status).toBe(200);
    } finally {
      await second.stop();
    }
  }, 120_000);

  it('stops every process it started', async () => {
    const running = await startStack({ port: 0 });
    const pids = running.childPids;
    expect(pids.length).toBe(2);
    await running.stop();
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    await expect(fetch(`${running.baseUrl}/api/v1/health`)).rejects.toThrow();
  }, 120_000);
});
