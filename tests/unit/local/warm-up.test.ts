// npm start loads every function before its banner: one request per function that answers without a credential.
import { describe, expect, it } from 'vitest';
import { warmUpPaths } from '../../../local/stack.js';

describe('warmUpPaths', () => {
  it('calls each function once, on its first route, with path parameters filled in, plus the stream function', () => {
    const paths = warmUpPaths({
      httpEvents: [
        { functionName: 'meta', method: 'ANY', path: '/api/v1/health' },
        { functionName: 'meta', method: 'ANY', path: '/api/v1/server/{proxy+}' },
        { functionName: 'auth', method: 'ANY', path: '/api/v1/auth/{proxy+}' },
        { functionName: 'deployments', method: 'ANY', path: '/api/v1/deployments/{id}/logs' },
        { functionName: 'notFound', method: 'ANY', path: '*' },
      ],
    });
    expect(paths).toEqual([
      '/api/v1/health',
      '/api/v1/auth/warm-up',
      '/api/v1/deployments/warm-up/logs',
      '/api/v1/warm-up',
      '/api/v1/sse/targets',
    ]);
  });
});
