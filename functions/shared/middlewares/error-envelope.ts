// Any error as the spec's envelope (a gate's finished answer as it is), so nothing escapes as a raw 500.
import { randomUUID } from 'node:crypto';
import { renderError } from '../errors.js';
import { BASE_HEADERS, JSON_TYPE, ShellAnswer } from './answers.js';
import { requestState, type Middleware } from './request-state.js';

/** Renders any error as the spec's envelope, so nothing escapes as a raw 500. */
export const errorEnvelope = (): Middleware => ({
  onError: function renderErrorEnvelope(request) {
    if (request.error instanceof ShellAnswer) {
      request.response = request.error.response;
      return;
    }
    const requestId = requestState(request.context)?.requestId ?? randomUUID();
    const { statusCode, body, headers } = renderError(request.error, requestId);
    request.response = {
      statusCode,
      headers: { ...BASE_HEADERS, 'content-type': JSON_TYPE, ...headers },
      body: JSON.stringify(body),
    };
  },
});
