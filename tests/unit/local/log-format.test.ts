import { describe, expect, it } from 'vitest';
import { formatLogLine } from '../../../local/log-format.js';

describe('formatLogLine', () => {
  it('shows a request as one short line', () => {
    const line = JSON.stringify({
      level: 'INFO',
      message: 'request',
      timestamp: '2026-11-22T04:21:03.066Z',
      service: 'deployer',
      method: 'GET',
      path: '/api/v1/health',
      status: 200,
      duration_ms: 33,
      request_id: 'r1',
    });
    expect(formatLogLine(line)).toBe('04:21:03 GET /api/v1/health -> 200 (33 ms)');
  });

  it('keeps the fields of other entries and passes plain text through', () => {
    const line = JSON.stringify({
      level: 'ERROR',
      message: 'unhandled error',
      timestamp: '2026-11-22T04:21:03.066Z',
      service: 'deployer',
      request_id: 'r1',
      error: { name: 'Error' },
    });
    expect(formatLogLine(line)).toBe('04:21:03 ERROR unhandled error request_id=r1 error={"name":"Error"}');
    expect(formatLogLine('Offline [http for lambda] listening')).toBe('Offline [http for lambda] listening');
    expect(formatLogLine('{not json')).toBe('{not json');
  });

  it('hides the agents’ successful heartbeats and polls, not their failures', () => {
    const request = (method: string, path: string, status: number) =>
      JSON.stringify({
        level: 'INFO',
        message: 'request',
        timestamp: '2026-11-22T04:21:03.000Z',
        method,
        path,
        status,
        duration_ms: 5,
      });
    expect(formatLogLine(request('POST', '/api/v1/agent/heartbeat', 200))).toBeUndefined();
    expect(formatLogLine(request('GET', '/api/v1/agent/commands', 200))).toBeUndefined();
    expect(formatLogLine(request('POST', '/api/v1/agent/heartbeat', 401))).toBe(
      '04:21:03 POST /api/v1/agent/heartbeat -> 401 (5 ms)',
    );
    expect(formatLogLine(request('POST', '/api/v1/agent/commands/c1/output', 200))).toBe(
      '04:21:03 POST /api/v1/agent/commands/c1/output -> 200 (5 ms)',
    );
  });
});
