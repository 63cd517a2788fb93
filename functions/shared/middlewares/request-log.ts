// The outermost middleware: the request id (on every answer and log line) and one access log line per request.
import { randomUUID } from 'node:crypto';
import { logger } from '../logger.js';
import { requestState, startRequestState, type Middleware, type Request } from './request-state.js';

/** Assigns the request id, adds it to every response and log line, and writes one access log line. */
export const requestLog = (): Middleware => {
  const finish = (request: Request): void => {
    const state = requestState(request.context);
    const response = request.response;
    if (state === undefined || response === undefined || response === null) return;
    response.headers = { ...response.headers, 'x-request-id': state.requestId };
    logger.info('request', {
      // Named here too: locally several requests of one function run interleaved in one process (decisions.md).
      request_id: state.requestId,
      method: request.event.requestContext?.http?.method,
      path: request.event.rawPath,
      status: response.statusCode,
      duration_ms: Date.now() - state.started,
    });
    logger.removeKeys(['request_id']);
  };
  return {
    before: function assignRequestId(request) {
      // Lambda's request id: unique per invocation in the cloud and locally (serverless-offline gives every
      // request the same API Gateway requestId), and the id in the function's own log lines.
      const requestId = request.context?.awsRequestId || randomUUID();
      startRequestState(request.context, { requestId, started: Date.now() });
      logger.appendKeys({ request_id: requestId });
    },
    after: finish,
    onError: finish,
  };
};
