// The composition root, core part: configuration, AWS clients, health probes and the general rate limit. Real
// adapters are created once per container on first use (no network at import time). Identity adapters live in
// identity-wiring.ts, so light public functions (health, unknown paths) do not load them at cold start.
import type { HealthDeps } from '../../domain/health/check-health.js';
import type { RateLimiter } from '../../domain/identity/ports.js';
import { amortisedRateGate } from '../../domain/identity/rate-gate.js';
import { makeDynamoClient, makeSqsClient } from '../../infra/aws-clients.js';
import { config, missingCloudSettings } from '../../infra/config.js';
import { DynamoIdGenerator } from '../../infra/dynamodb/id-generator.js';
import { DynamoRateLimiter } from '../../infra/dynamodb/rate-limiter.js';
import { dynamoProbe, sqsProbe } from '../../infra/health-probes.js';
import { powertoolsMetrics } from '../../infra/metrics.js';
import { systemClock } from '../../infra/system/clock.js';
import { corsSettings, parseCorsOrigins } from './cors.js';
import { logger } from './logger.js';
import type { RateGate } from './middlewares.js';
import { once } from './once.js';
import type { BaseShell } from './shell.js';

export const infra = once(() => {
  const cfg = config();
  return { config: cfg, db: makeDynamoClient(cfg), clock: systemClock };
});

// The values below are marked pure (once() only wraps its factory): a bundle that never uses one leaves it out with
// what only it needs: the SQS client and the health probes outside the health routes, sqids where nothing is created.

/** The SQS client, apart from infra(): a function that sends no message does not bundle or load the SQS client. */
export const sqs = /* @__PURE__ */ once(() => makeSqsClient(infra().config));
/** The business metrics (CloudWatch embedded metrics in the cloud; nothing locally). */
export const serviceMetrics = /* @__PURE__ */ once(() => powertoolsMetrics());

export const healthDeps = /* @__PURE__ */ once((): HealthDeps => {
  const { config: cfg, db, clock } = infra();
  return { probes: [dynamoProbe(db, cfg.TABLE_NAME), sqsProbe(sqs(), cfg.DISPATCH_QUEUE_URL)], clock };
});

export const ids = /* @__PURE__ */ once(
  () =>
    new DynamoIdGenerator(infra().db, infra().config.TABLE_NAME, {
      alphabet: infra().config.SQIDS_ALPHABET,
      minLength: infra().config.SHORT_ID_MIN_LENGTH,
    }),
);

const rateLimiter = once(
  () => new DynamoRateLimiter(infra().db, infra().config.RATE_LIMIT_TABLE_NAME ?? infra().config.TABLE_NAME),
);
/** A take that answered after this long judged the request by a stale clock: it is asked again once. */
const STALE_TAKE_MS = 500;

/**
 * The shared bucket, asked again once when a refusal came late: GCRA compares the request's time with the
 * bucket's, so a request whose process stalled (a loaded machine, a long GC pause) between reading the clock and
 * the write would be judged as early as it was stale, and refused.
 */
export const sharedBucket: RateLimiter = {
  take: async (key, policy, now, count) => {
    const decision = await rateLimiter().take(key, policy, now, count);
    if (decision.allowed || systemClock.now().getTime() - now.getTime() < STALE_TAKE_MS) return decision;
    return rateLimiter().take(key, policy, systemClock.now(), count);
  },
};

/**
 * The general rate limit: per client address, shared by every instance (GCRA in the table), spent from leases of
 * several tokens so that most requests write nothing (domain/identity/rate-gate.ts).
 */
const amortised = once(() =>
  amortisedRateGate(
    sharedBucket,
    () => ({ ratePerSecond: infra().config.RATE_LIMIT_PER_SECOND, burst: infra().config.RATE_LIMIT_BURST }),
    systemClock,
  ),
);
const rateGate: RateGate = (ip) => amortised()(`ip#${ip}`);

/** CORS_ORIGINS, read at cold start; a malformed list serves no origin and is a startup problem. */
const corsOrigins = ((): { origins: readonly string[]; problem?: string } => {
  try {
    return { origins: parseCorsOrigins(process.env['CORS_ORIGINS']) };
  } catch (error) {
    return { origins: [], problem: (error as Error).message };
  }
})();

// No silent defaults in the cloud: outside the local stage a cold start missing PUBLIC_BASE_URL or
// EDGE_ORIGIN_SECRET answers every request 503 naming them (logged once per container).
export const startupProblems = once(() => {
  const problems = [
    ...missingCloudSettings(process.env),
    ...(corsOrigins.problem === undefined ? [] : [corsOrigins.problem]),
  ];
  if (problems.length > 0) logger.error('refusing to serve: incomplete configuration', { problems });
  return problems;
});

/** What every endpoint's shell has (functions/shared/shell.ts); the areas add their authenticators. */
export const baseShell: BaseShell = {
  rateGate,
  startupProblems,
  cors: corsSettings(corsOrigins.origins),
};
