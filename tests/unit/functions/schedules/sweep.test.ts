// The sweep's handler: a run in which a step failed still returns nothing but fails the invocation, so the
// function's Errors metric (SweepFailingAlarm, infra/monitoring.cjs) sees a sweep that keeps failing part of its work.
import { describe, expect, it } from 'vitest';
import type { SweepDeps, SweepReport } from '../../../../domain/deployments/sweep.js';
import { makeHandler } from '../../../../functions/schedules/sweep.js';

const report = (errors: string[]): SweepReport => ({
  settled: ['d-1'],
  recovered: 0,
  rearmed: [],
  wokeDispatcher: false,
  errors,
});
const deps = {} as SweepDeps;

describe('sweep handler', () => {
  it('answers the report of a run where everything worked', async () => {
    const ran: SweepDeps[] = [];
    const handler = makeHandler(
      () => deps,
      async (d) => {
        ran.push(d);
        return report([]);
      },
    );
    await expect(handler()).resolves.toEqual({ ...report([]), viewersClosed: 0 });
    expect(ran).toEqual([deps]);
  });

  it('fails the invocation after a run in which a step failed, counting the failed steps', async () => {
    const handler = makeHandler(
      () => deps,
      async () => report(['outbox of d-2: throttled', 'outbox of d-3: throttled']),
    );
    await expect(handler()).rejects.toThrow('sweep: 2 step(s) failed');
  });

  it('fails the invocation when the run itself throws', async () => {
    const handler = makeHandler(
      () => deps,
      async () => {
        throw new Error('table unreachable');
      },
    );
    await expect(handler()).rejects.toThrow('table unreachable');
  });
});
