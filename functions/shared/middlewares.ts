// The named middy middlewares every HTTP and streaming endpoint is made of, one file each in middlewares/
// (functions/shared/shell.ts puts them in order). Each takes what it needs as arguments: nothing there reads a
// module-level default, so an endpoint bound without an authenticator does not compile (shell.ts) instead of
// failing at request time. What they learn about a request is kept on its context (middlewares/request-state.ts).
//
// Order of a chain, outermost first: requestLog, cors, securityHeaders, errorEnvelope, renderResponse,
// httpHeaderNormalizer, startupGate, rateLimit, authentication, jsonBody, validateRequest, the endpoint.
// Gates refuse by throwing: middy skips every `after` when a `before` returns early, and the outer middlewares
// (request id, CORS, security headers) must dress every answer, refusals included.
//
// This file names them for the modules outside the shell (http.ts, wiring.ts, idempotency.ts).
export {
  BASE_HEADERS,
  configurationError,
  JSON_TYPE,
  renderResult,
  serviceUnavailable,
  ShellAnswer,
  type HttpResult,
} from './middlewares/answers.js';
export {
  authentication,
  type Access,
  type AgentAuthenticator,
  type Authenticator,
} from './middlewares/authentication.js';
export { readCookies } from './middlewares/cookies.js';
export { cors } from './middlewares/cors.js';
export { errorEnvelope } from './middlewares/error-envelope.js';
export { jsonBody, MAX_BODY_BYTES, readBody } from './middlewares/json-body.js';
export { LIMITER_DOWN_RETRY_SECONDS, rateLimit, type RateGate } from './middlewares/rate-limit.js';
export { renderResponse } from './middlewares/render-response.js';
export { requestLog } from './middlewares/request-log.js';
export { requestState, type Middleware } from './middlewares/request-state.js';
export { securityHeaders } from './middlewares/security-headers.js';
export { startupGate } from './middlewares/startup-gate.js';
export { parseQuery, validateRequest, validBody, type InputSchemas } from './middlewares/validate-request.js';
