// The edges of the HTTP shell: throttling answers 503 with Retry-After, auth routes refuse when the limiter's
// store is down, and a cold start outside the local stage without its required settings refuses everything.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DatabaseError } from '../../../../domain/errors.js';
import { isThrottling, renderError } from '../../../../functions/shared/errors.js';
import { http } from '../../../../functions/shared/http.js';
import { logger } from '../../../../functions/shared/logger.js';
import { missingCloudSettings, parseConfig } from '../../../../infra/config.js';
import { httpEvent, lambdaContext, parseResponse } from '../../../fakes/lambda.js';
import { bound } from '../../../fakes/shell.js';

const named = (name: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(`${name}: internal detail table-xyz`), { name, ...extra });

afterEach(() => vi.restoreAllMocks());

describe('throttling', () => {
  it('answers 503 SERVICE_UNAVAILABLE with Retry-After: 1 for every DynamoDB throttling error, leaking nothing', () => {
    vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    for (const name of [
      'ProvisionedThroughputExceededException',
      'ThrottlingException',
      'RequestLimitExceeded',
      'TransactionConflictException',
    ]) {
      const direct = renderError(named(name), 'req-1');
      const wrapped = renderError(new DatabaseError(false, { cause: named(name) }), 'req-2');
      for (const rendered of [direct, wrapped]) {
        expect([name, rendered.statusCode, rendered.body.error.code, rendered.headers?.['retry-after']]).toEqual([
          name,
          503,
          'SERVICE_UNAVAILABLE',
          '1',
        ]);
        expect(JSON.stringify(rendered.body)).not.toContain('table-xyz');
      }
    }
  });

  it('counts a cancelled transaction as throttling only for conflicts, not failed conditions', () => {
    expect(
      isThrottling(
        named('TransactionCanceledException', {
          CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }],
        }),
      ),
    ).toBe(true);
    expect(
      isThrottling(
        named('TransactionCanceledException', { CancellationReasons: [{ Code: 'ConditionalCheckFailed' }] }),
      ),
    ).toBe(false);
    expect(isThrottling(named('ValidationException'))).toBe(false);
    vi.spyOn(logger, 'error').mockImplementation(() => undefined);
    const other = renderError(named('ValidationException'), 'req-3');
    expect([other.statusCode, other.body.error.code]).toEqual([500, 'INTERNAL_ERROR']);
    expect(JSON.stringify(other.body)).not.toContain('table-xyz');
  });
});

const route = (limiterDown?: 'refuse', failure: Error = new Error('ResourceNotFoundException')) =>
  bound(
    http(
      {
        operationId: 'x',
        summary: 'x',
        tags: [],
        permission: 'public',
        ...(limiterDown === undefined ? {} : { limiterDown }),
        responses: {},
      },
      async () => ({ statusCode: 200, body: { ok: true } }),
    ),
    { rateGate: async () => Promise.reject(failure), startupProblems: () => [] },
  );

describe('the general limiter’s store is down', () => {
  it('lets ordinary requests through and refuses auth routes with 503 and Retry-After', async () => {
    vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    const ordinary = parseResponse(await route()(httpEvent('GET', '/x'), lambdaContext()));
    const auth = parseResponse(await route('refuse')(httpEvent('POST', '/x'), lambdaContext()));
    expect(ordinary.statusCode).toBe(200);
    expect(auth.statusCode).toBe(503);
    expect((auth.json as { error: { code: string } }).error.code).toBe('SERVICE_UNAVAILABLE');
    expect(Number(auth.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('a configuration that does not parse', () => {
  it('is 500 CONFIGURATION_ERROR on every route, the auth routes too: not a limiter outage to retry', async () => {
    // Prepare
    vi.spyOn(logger, 'error').mockImplementation(() => undefined);
    const failure = (): Error => {
      try {
        parseConfig({ TABLE_NAME: 't', DISPATCH_QUEUE_URL: 'nope', ORCHESTRATOR_QUEUE_URL: 'https://q/o' });
      } catch (error) {
        return error as Error;
      }
      throw new Error('parseConfig accepted a malformed variable');
    };
    // Act
    const replies = [
      parseResponse(await route(undefined, failure())(httpEvent('GET', '/x'), lambdaContext())),
      parseResponse(await route('refuse', failure())(httpEvent('POST', '/x'), lambdaContext())),
    ];
    // Assess
    for (const reply of replies) {
      expect([reply.statusCode, reply.headers['retry-after']]).toEqual([500, undefined]);
      expect((reply.json as { error: object }).error).toEqual({
        code: 'CONFIGURATION_ERROR',
        message: 'The service is not configured: DISPATCH_QUEUE_URL is invalid.',
        details: { request_id: expect.any(String) },
      });
    }
  });
});

describe('the cold start’s configuration check', () => {
  it('names PUBLIC_BASE_URL and EDGE_ORIGIN_SECRET when missing outside the local stage; nothing locally', () => {
    expect(missingCloudSettings({ STAGE: 'local' })).toEqual([]);
    expect(missingCloudSettings({})).toEqual([]);
    expect(missingCloudSettings({ STAGE: 'prod', PUBLIC_BASE_URL: 'https://x', EDGE_ORIGIN_SECRET: 's' })).toEqual([]);
    expect(missingCloudSettings({ STAGE: 'prod', EDGE_ORIGIN_SECRET: 's' })[0]).toMatch(/^PUBLIC_BASE_URL is not set/);
    expect(missingCloudSettings({ STAGE: 'prod', PUBLIC_BASE_URL: 'https://x', EDGE_ORIGIN_SECRET: ' ' })[0]).toMatch(
      /^EDGE_ORIGIN_SECRET is not set/,
    );
    expect(missingCloudSettings({ STAGE: 'dev' })[0]).toMatch(/PUBLIC_BASE_URL and EDGE_ORIGIN_SECRET are not set/);
  });

  it('answers every request 500 CONFIGURATION_ERROR naming the missing variables, before any limiter or authentication', async () => {
    const gate = vi.fn();
    const handler = bound(
      http({ operationId: 'y', summary: 'y', tags: [], permission: 'targets:read', responses: {} }, async () => ({
        statusCode: 200,
        body: {},
      })),
      {
        rateGate: gate,
        startupProblems: () => missingCloudSettings({ STAGE: 'prod', EDGE_ORIGIN_SECRET: 'set' }),
      },
    );
    const reply = parseResponse(await handler(httpEvent('GET', '/y'), lambdaContext()));
    expect(reply.statusCode).toBe(500);
    expect(reply.headers['retry-after']).toBeUndefined();
    expect((reply.json as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'CONFIGURATION_ERROR',
      message: expect.stringContaining('PUBLIC_BASE_URL'),
    });
    expect((reply.json as { error: { message: string } }).error.message).not.toContain('EDGE_ORIGIN_SECRET');
    expect(gate).not.toHaveBeenCalled();
  });
});
