// health -> every DependencyProbe in parallel; readiness fails with SERVICE_UNAVAILABLE naming what is down.
import { ServiceUnavailableError } from '../errors.js';
import type { Clock } from '../shared/ports.js';

/** A dependency the service needs; `check` resolves when it answers and rejects when it does not. */
export interface DependencyProbe {
  readonly name: string;
  check(): Promise<void>;
}

export interface HealthDeps {
  readonly probes: readonly DependencyProbe[];
  readonly clock: Clock;
}

export interface DependencyHealth {
  readonly status: 'up' | 'down';
  readonly latency_ms: number;
}

export interface HealthReport {
  readonly status: 'ok' | 'degraded';
  readonly checked_at: string;
  readonly dependencies: Readonly<Record<string, DependencyHealth>>;
}

const probe = async (clock: Clock, dependency: DependencyProbe): Promise<[string, DependencyHealth]> => {
  const started = clock.now().getTime();
  const status = await dependency.check().then(
    () => 'up' as const,
    () => 'down' as const,
  );
  return [dependency.name, { status, latency_ms: clock.now().getTime() - started }];
};

export const checkHealth = async ({ probes, clock }: HealthDeps): Promise<HealthReport> => {
  const results = await Promise.all(probes.map((p) => probe(clock, p)));
  return {
    status: results.every(([, r]) => r.status === 'up') ? 'ok' : 'degraded',
    checked_at: clock.now().toISOString(),
    dependencies: Object.fromEntries(results),
  };
};

export const checkReadiness = async (deps: HealthDeps): Promise<HealthReport> => {
  const report = await checkHealth(deps);
  const down = Object.entries(report.dependencies)
    .filter(([, r]) => r.status === 'down')
    .map(([name]) => name);
  if (down.length > 0) {
    throw new ServiceUnavailableError(`Not ready: ${down.join(', ')} unreachable.`, { unavailable: down });
  }
  return report;
};
