// AnalysisProvider adapter: an OpenAI-compatible chat-completions endpoint (POST <provider_url>/chat/completions,
// or provider_url itself when it already ends so). Any failure (network, timeout, a non-2xx such as 429, an answer
// without choices[0].message.content) is a ProviderError; the pipeline falls back to the rules.
import { ProviderError, type AnalysisProvider } from '../../domain/analysis/model.js';

export const chatCompletionsUrl = (url: string): string =>
  /\/chat\/completions\/?$/.test(url) ? url : `${url.replace(/\/+$/, '')}/chat/completions`;

export const openAiCompatibleProvider = (fetcher: typeof fetch = fetch): AnalysisProvider => ({
  async complete(request) {
    let response: Response;
    try {
      response = await fetcher(chatCompletionsUrl(request.url), {
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
        signal: AbortSignal.timeout(request.timeoutMs),
      });
    } catch (error) {
      throw new ProviderError(
        (error as Error).name === 'TimeoutError'
          ? `no answer within ${request.timeoutMs} ms`
          : `unreachable (${(error as Error).message})`,
      );
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new ProviderError(`answered HTTP ${response.status}`);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      throw new ProviderError('answered something that is not JSON');
    }
    const content = (body as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
    if (typeof content !== 'string') throw new ProviderError('answered without choices[0].message.content');
    return content;
  },
});
