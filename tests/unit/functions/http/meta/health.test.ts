import { describe, expect, it } from 'vitest';
import * as healthGet from '../../../../../functions/http/meta/health-get.js';
import * as readyGet from '../../../../../functions/http/meta/health-ready-get.js';
import { handler as serverInfo } from '../../../../../functions/http/meta/server-info-get.js';
import pkg from '../../../../../package.json' with { type: 'json' };
import { FakeClock } from '../../../../fakes/clock.js';
import { httpEvent, lambdaContext, parseResponse } from '../../../../fakes/lambda.js';
import { bound } from '../../../../fakes/shell.js';

const deps = (sqsUp: boolean) => () => {
  const clock = new FakeClock();
  return {
    clock,
    probes: [
      { name: 'dynamodb', check: async () => undefined },
      {
        name: 'sqs',
        check: async () => (sqsUp ? undefined : Promise.reject(new Error('ECONNREFUSED 127.0.0.1:9324'))),
      },
    ],
  };
};

describe('health endpoints', () => {
  it('health answers 200 degraded when SQS is down, without internals', async () => {
    const response = parseResponse(
      await bound(healthGet.makeHandler(deps(false)))(httpEvent('GET', '/api/v1/health'), lambdaContext()),
    );
    expect(response.statusCode).toBe(200);
    expect(response.json).toMatchObject({
      status: 'degraded',
      dependencies: { dynamodb: { status: 'up' }, sqs: { status: 'down' } },
    });
    expect(response.raw).not.toContain('ECONNREFUSED');
  });

  it('readiness answers 503 SERVICE_UNAVAILABLE naming SQS', async () => {
    const response = parseResponse(
      await bound(readyGet.makeHandler(deps(false)))(httpEvent('GET', '/api/v1/health/ready'), lambdaContext()),
    );
    expect(response.statusCode).toBe(503);
    expect(response.json.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'Not ready: sqs unreachable.' });
  });

  it('readiness answers 200 when all is up', async () => {
    const response = parseResponse(
      await bound(readyGet.makeHandler(deps(true)))(httpEvent('GET', '/api/v1/health/ready'), lambdaContext()),
    );
    expect(response.statusCode).toBe(200);
    expect(response.json.status).toBe('ok');
  });

  it('server info reports the package version, API version 1.0.0, the engine version and the agents it takes', async () => {
    const response = parseResponse(await bound(serverInfo)(httpEvent('GET', '/api/v1/server/info'), lambdaContext()));
    expect(response.json).toEqual({
      server_version: pkg.version,
      api_version: '1.0.0',
      service: 'deployer',
      engine_version: pkg.version,
      agent_versions: '>=1.0.0 <2.0.0',
      agent_version: null,
    });
  });
});
