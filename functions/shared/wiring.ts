// The composition root: real adapters, created once per container on first use (no network at import time).
import { makeDynamoClient, makeSqsClient } from '../../infra/aws-clients.js';
import { config } from '../../infra/config.js';
import { dynamoProbe, sqsProbe } from '../../infra/health-probes.js';
import { systemClock } from '../../infra/system/clock.js';
import type { HealthDeps } from '../../domain/health/check-health.js';
import { once } from './once.js';

export const infra = once(() => {
  const cfg = config();
  return { config: cfg, db: makeDynamoClient(cfg), sqs: makeSqsClient(cfg), clock: systemClock };
});

export const healthDeps = once((): HealthDeps => {
  const { config: cfg, db, sqs, clock } = infra();
  return { probes: [dynamoProbe(db, cfg.TABLE_NAME), sqsProbe(sqs, cfg.DISPATCH_QUEUE_URL)], clock };
});
