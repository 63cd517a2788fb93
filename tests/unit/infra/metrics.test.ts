// The business metrics' adapter (infra/metrics.ts): one embedded-metrics line per event in the cloud, none locally
// unless asked for, and never an error into the work it describes.
import { describe, expect, it } from 'vitest';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { metricsEnabled, powertoolsMetrics } from '../../../infra/metrics.js';

const sink = (fail = false) => {
  const written: [string, string, number][] = [];
  let pending: [string, string, number][] = [];
  const fake = {
    addMetric: (name: string, unit: string, value: number) => {
      if (fail) throw new Error('metric store full');
      pending.push([name, unit, value]);
    },
    publishStoredMetrics: () => {
      written.push(...pending);
      pending = [];
    },
  };
  return { written, metrics: fake as unknown as Metrics };
};

describe('powertoolsMetrics', () => {
  it('writes each event at once in the cloud: starts with their wait, final states, agent connections', () => {
    // Prepare
    const { written, metrics } = sink();
    const port = powertoolsMetrics({ STAGE: 'prod' }, metrics);

    // Act
    port.deploymentStarted(1500);
    port.deploymentFinished('success');
    port.deploymentFinished('rolled_back');
    port.deploymentFinished('cancelled');
    port.agentConnected();

    // Assess
    expect(written).toEqual([
      ['DeploymentsStarted', 'Count', 1],
      ['DispatchLatency', 'Milliseconds', 1500],
      ['DeploymentsSucceeded', 'Count', 1],
      ['DeploymentsFailed', 'Count', 1],
      ['DeploymentsCancelled', 'Count', 1],
      ['AgentsConnected', 'Count', 1],
    ]);
  });

  it('writes nothing locally unless asked, and a failing metric store fails nothing', () => {
    // Prepare
    const local = sink();
    const failing = sink(true);

    // Act
    powertoolsMetrics({ STAGE: 'local' }, local.metrics).agentConnected();
    const failed = () => powertoolsMetrics({ STAGE: 'prod' }, failing.metrics).deploymentFinished('failed');

    // Assess
    expect(local.written).toEqual([]);
    expect(failed).not.toThrow();
    expect([
      metricsEnabled({ STAGE: 'local', POWERTOOLS_METRICS_DISABLED: 'false' }),
      metricsEnabled({ STAGE: 'prod', POWERTOOLS_METRICS_DISABLED: 'true' }),
      metricsEnabled({}),
    ]).toEqual([true, false, false]);
  });
});
