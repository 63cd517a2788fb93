// A shell for unit tests of endpoints (functions/shared/shell.ts): every request allowed by the rate gate, no
// startup problem, no CORS origin, and authenticators that refuse unless a test passes its own.
import { InvalidTokenError } from '../../domain/identity/errors.js';
import { corsSettings } from '../../functions/shared/cors.js';
import type { AuthKind, HttpEndpoint } from '../../functions/shared/http.js';
import { bindHttp, type FullShell, type LambdaHttpHandler, type ShellFor } from '../../functions/shared/shell.js';

export const testShell = (overrides: Partial<FullShell> = {}): FullShell => ({
  rateGate: async () => ({ allowed: true, remaining: 1, retryAfterSeconds: 0 }),
  startupProblems: () => [],
  cors: corsSettings([]),
  authenticate: async () => {
    throw new InvalidTokenError();
  },
  authenticateAgent: async () => {
    throw new InvalidTokenError();
  },
  ...overrides,
});

/** The endpoint as its Lambda handler, under the test shell (with `overrides`). */
export const bound = <K extends AuthKind>(
  endpoint: HttpEndpoint<K>,
  overrides: Partial<FullShell> = {},
): LambdaHttpHandler => bindHttp(endpoint, testShell(overrides) as unknown as ShellFor<K>);
