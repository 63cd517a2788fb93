// The business metrics (domain/shared/ports.ts ServiceMetrics) as CloudWatch embedded metrics: Powertools writes one
// EMF JSON line to the function's log per event, which CloudWatch turns into metrics of namespace `Deployer`,
// dimension `service` = `deployer-<stage>` (the dashboard's, infra/monitoring.cjs). No API call and no IAM grant: the
// log line is the metric. Locally (stage local, `npm start` and the tests) nothing is written unless
// POWERTOOLS_METRICS_DISABLED=false asks for it; POWERTOOLS_METRICS_DISABLED=true silences any stage.
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { ServiceMetrics } from '../domain/shared/ports.js';

export const METRICS_NAMESPACE = 'Deployer';

/** The metric each final state counts in (the others: `DeploymentsCancelled`). */
const FINISHED_METRIC: Readonly<Record<string, string>> = {
  success: 'DeploymentsSucceeded',
  failed: 'DeploymentsFailed',
  rolled_back: 'DeploymentsFailed',
};

/** Whether metrics are written: off on the local stage unless asked for; the Powertools variable wins. */
export const metricsEnabled = (env: Readonly<Record<string, string | undefined>>): boolean => {
  const disabled = (env['POWERTOOLS_METRICS_DISABLED'] ?? '').trim().toLowerCase();
  if (disabled !== '') return disabled !== 'true';
  const stage = (env['STAGE'] ?? '').trim();
  return stage !== '' && stage !== 'local';
};

export const powertoolsMetrics = (
  env: Readonly<Record<string, string | undefined>> = process.env,
  sink?: Metrics,
): ServiceMetrics => {
  const enabled = metricsEnabled(env);
  const metrics =
    sink ?? new Metrics({ namespace: METRICS_NAMESPACE, serviceName: `deployer-${env['STAGE'] ?? 'local'}` });
  const emit = (name: string, unit: (typeof MetricUnit)[keyof typeof MetricUnit], value: number) => {
    if (!enabled) return;
    try {
      metrics.addMetric(name, unit, value);
      metrics.publishStoredMetrics();
    } catch {
      // a metric never fails the work it describes
    }
  };
  return {
    deploymentStarted: (waitedMs) => {
      emit('DeploymentsStarted', MetricUnit.Count, 1);
      emit('DispatchLatency', MetricUnit.Milliseconds, waitedMs);
    },
    deploymentFinished: (state) => emit(FINISHED_METRIC[state] ?? 'DeploymentsCancelled', MetricUnit.Count, 1),
    agentConnected: () => emit('AgentsConnected', MetricUnit.Count, 1),
  };
};
