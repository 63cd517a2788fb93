import { describe, expect, it } from 'vitest';
import { ServiceUnavailableError } from '../../../../domain/errors.js';
import { checkHealth, checkReadiness, type DependencyProbe } from '../../../../domain/health/check-health.js';
import { FakeClock } from '../../../fakes/clock.js';

const probe = (name: string, up: boolean, clock: FakeClock, takesMs = 5): DependencyProbe => ({
  name,
  check: async () => {
    clock.advance(takesMs);
    if (!up) throw new Error(`${name} down`);
  },
});

describe('checkHealth', () => {
  it('is ok when every dependency answers, with each latency', async () => {
    const clock = new FakeClock();
    const report = await checkHealth({ probes: [probe('dynamodb', true, clock, 7)], clock });
    expect(report).toEqual({
      status: 'ok',
      checked_at: '2026-01-01T00:00:00.007Z',
      dependencies: { dynamodb: { status: 'up', latency_ms: 7 } },
    });
  });

  it('is degraded, not failed, when one is down', async () => {
    const clock = new FakeClock();
    const report = await checkHealth({ probes: [probe('dynamodb', true, clock), probe('sqs', false, clock)], clock });
    expect(report.status).toBe('degraded');
    expect(report.dependencies['sqs']?.status).toBe('down');
  });
});

describe('checkReadiness', () => {
  it('throws SERVICE_UNAVAILABLE naming what is down', async () => {
    const clock = new FakeClock();
    const ready = checkReadiness({ probes: [probe('dynamodb', false, clock), probe('sqs', true, clock)], clock });
    await expect(ready).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(ready).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { unavailable: ['dynamodb'] } });
  });

  it('returns the report when everything is up', async () => {
    const clock = new FakeClock();
    await expect(checkReadiness({ probes: [probe('sqs', true, clock)], clock })).resolves.toMatchObject({
      status: 'ok',
    });
  });
});
