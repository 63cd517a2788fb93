// The endpoint's HttpResult -> API Gateway's structured result, on the way out.
import { renderResult, wasRendered, type HttpResult } from './answers.js';
import type { Middleware } from './request-state.js';

/** The endpoint's HttpResult -> API Gateway's structured result (JSON, text or empty body; cookies). */
export const renderResponse = (): Middleware => ({
  after: function renderHttpResult(request) {
    const response = request.response as unknown;
    if (response === undefined || response === null || wasRendered(response)) return;
    request.response = renderResult(response as HttpResult);
  },
});
