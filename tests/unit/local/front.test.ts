// The local front's rewrites of serverless-offline's own answers into the service's envelope.
import { describe, expect, it } from 'vitest';
import { platformAnswer, timeoutAnswer } from '../../../local/front.js';

describe('the local front', () => {
  it('turns serverless-offline’s 200 for a function past its timeout into a 503 envelope', () => {
    const body = JSON.stringify({
      errorMessage: '[504] - Lambda timeout.',
      errorType: 'LambdaTimeoutError',
      stackTrace: ['at x'],
    });
    expect(JSON.parse(timeoutAnswer(body)!)).toEqual({
      error: { code: 'SERVICE_UNAVAILABLE', message: expect.any(String), details: { source: 'gateway' } },
    });
    expect(timeoutAnswer(JSON.stringify({ data: [], meta: {} }))).toBeUndefined();
    expect(timeoutAnswer('not json')).toBeUndefined();
  });

  it('rewrites hapi’s Boom answers, and nothing else', () => {
    expect(
      JSON.parse(
        platformAnswer(
          400,
          JSON.stringify({ statusCode: 400, error: 'Bad Request', message: 'Invalid cookie value' }),
        )!,
      ).error.code,
    ).toBe('VALIDATION_ERROR');
    expect(platformAnswer(404, JSON.stringify({ error: { code: 'NOT_FOUND', message: 'x' } }))).toBeUndefined();
  });
});
