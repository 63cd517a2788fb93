import * as v from 'valibot';

export const HealthReportSchema = v.object({
  status: v.picklist(['ok', 'degraded']),
  checked_at: v.string(),
  dependencies: v.record(v.string(), v.object({ status: v.picklist(['up', 'down']), latency_ms: v.number() })),
});
