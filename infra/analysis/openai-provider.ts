// AnalysisProvider adapter: an OpenAI-compatible chat-completions endpoint (POST <provider_url>/chat/completions,
// or provider_url itself when it already ends so), through the SSRF guard (infra/net: https only, every address
// checked at connection time, no redirects, the answer capped, the request's own deadline). Hosts in
// ANALYSIS_ALLOWED_HOSTS are exempt from the address check and may be reached over http (a model server inside the
// network). Any failure is a ProviderError whose message an admin sees (the test endpoint, a request's last_error):
// "refused: ...", "unreachable", "not 2xx", never the provider's status, body, headers or a transport message.
import { ProviderError, type AnalysisProvider } from '../../domain/analysis/model.js';
import type { ProviderUrlPolicy } from '../../domain/analysis/settings.js';
import { urlProblem } from '../net/address-policy.js';
import { guardedFetch, OutboundRequestError, savedUrlProblem, type FetchPolicy } from '../net/guarded-fetch.js';

/** The largest answer read (a chat completion of at most 4000 tokens is far below). */
export const PROVIDER_MAX_ANSWER_BYTES = 512 * 1024;

export const chatCompletionsUrl = (url: string): string =>
  /\/chat\/completions\/?$/.test(url) ? url : `${url.replace(/\/+$/, '')}/chat/completions`;

/** What an admin is told about a failed request: the kind of failure only. */
const failureMessage = (error: unknown, timeoutMs: number): string => {
  if (!(error instanceof OutboundRequestError)) return 'unreachable';
  switch (error.reason) {
    case 'refused':
      return 'refused: private address';
    case 'timeout':
      return `unreachable: no answer within ${timeoutMs} ms`;
    case 'too_large':
      return `unreachable: the answer is larger than ${PROVIDER_MAX_ANSWER_BYTES} bytes`;
    default:
      return 'unreachable';
  }
};

/** The SSRF guard's policy for provider URLs typed in the settings (checked when they are saved). */
export const providerUrlPolicy = (allowedHosts: readonly string[]): ProviderUrlPolicy => ({
  problem: (url) => savedUrlProblem(allowedHosts, url),
});

export const openAiCompatibleProvider = (allowedHosts: readonly string[]): AnalysisProvider => ({
  async complete(request) {
    const policy: FetchPolicy = {
      allowedHosts,
      timeoutMs: request.timeoutMs,
      maxBytes: PROVIDER_MAX_ANSWER_BYTES,
      maxRedirects: 0,
      userAgent: 'deployer-analysis/1',
    };
    const url = chatCompletionsUrl(request.url);
    // Our own sentence about the URL (scheme, credentials, an internal IP literal); names resolve at connection.
    const problem = urlProblem(allowedHosts, url);
    if (problem !== undefined) throw new ProviderError(`refused: the URL ${problem}`);
    let response;
    try {
      response = await guardedFetch(policy, url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(request.apiKey === null ? {} : { authorization: `Bearer ${request.apiKey}` }),
        },
        body: JSON.stringify({
          model: request.model,
          max_tokens: request.maxTokens,
          temperature: 0,
          messages: [
            { role: 'system', content: request.system },
            { role: 'user', content: request.prompt },
          ],
        }),
      });
    } catch (error) {
      throw new ProviderError(failureMessage(error, request.timeoutMs));
    }
    // A redirect is not followed (the key would go along): it is a failure like any other non-2xx answer.
    if (response.status < 200 || response.status > 299) throw new ProviderError('not 2xx');
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      throw new ProviderError('answered something that is not JSON');
    }
    const content = (body as { choices?: { message?: { content?: unknown } }[] } | null)?.choices?.[0]?.message
      ?.content;
    if (typeof content !== 'string') throw new ProviderError('answered without choices[0].message.content');
    return content;
  },
});
