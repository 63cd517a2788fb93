// The optional model provider: an OpenAI-compatible chat-completions endpoint asked for the same analysis object.
// Only masked text leaves the service (secret values become ***); the answer is parsed and checked field by field,
// and anything else (garbage, a missing field, a timeout, a 429) is a ProviderError: the rules answer instead when
// `fallback_to_rules` is on.
import { offsetTime } from '../shared/time-format.js';
import { ProviderError, type AnalysisInput, type AnalysisProvider, type FailureAnalysis } from './model.js';
import type { AnalysisSettings } from './settings.js';

const SYSTEM = [
  'You diagnose failed deployment commands for platform engineers.',
  'Answer with one JSON object and nothing else:',
  '{"confidence": number 0..1, "summary": string (one sentence), "likely_cause": string,',
  ' "remediation": array of 1 to 6 concrete steps (strings)}.',
  'Base it only on the exit code and the output given. Never invent values shown as ***.',
].join('\n');

/** Every non-empty secret value replaced by *** (longest first, so a value containing another is masked whole). */
export const maskValues = (text: string, secrets: readonly string[] = []): string =>
  [...secrets]
    .filter((s) => s !== '')
    .sort((a, b) => b.length - a.length)
    .reduce((masked, secret) => masked.split(secret).join('***'), text);

export const providerPrompt = (input: AnalysisInput): string => {
  const mask = (text: string) => maskValues(text, input.secretValues);
  return [
    `Action: ${mask(input.actionName ?? 'unknown')}`,
    `Interpreter: ${input.interpreter ?? 'unknown'}`,
    `Exit code: ${input.exitCode ?? 'unknown'}`,
    input.errorMessage === null ? '' : `Agent message: ${mask(input.errorMessage)}`,
    `--- stderr (last part) ---\n${mask(input.stderrTail) || '(empty)'}`,
    `--- stdout (last part) ---\n${mask(input.stdoutTail) || '(empty)'}`,
  ]
    .filter((line) => line !== '')
    .join('\n');
};

const text = (value: unknown, field: string, max: number): string => {
  if (typeof value !== 'string' || value.trim() === '') throw new ProviderError(`The answer has no ${field}.`);
  return value.trim().slice(0, max);
};

/** The model's answer as the analysis object; ProviderError when it is not one. */
export const parseProviderAnswer = (
  answer: string,
  model: string,
  now: Date,
  secrets: readonly string[] = [],
): FailureAnalysis => {
  const body = /```(?:json)?\s*([\s\S]*?)```/.exec(answer)?.[1] ?? answer;
  const start = body.indexOf('{');
  const end = body.lastIndexOf('}');
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.slice(start, end + 1));
  } catch {
    throw new ProviderError('The answer is not a JSON object.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new ProviderError('The answer is not a JSON object.');
  const o = parsed as Record<string, unknown>;
  const confidence = typeof o['confidence'] === 'number' ? o['confidence'] : Number.NaN;
  if (!Number.isFinite(confidence)) throw new ProviderError('The answer has no numeric confidence.');
  const remediation = o['remediation'];
  if (!Array.isArray(remediation) || remediation.length === 0 || !remediation.every((s) => typeof s === 'string'))
    throw new ProviderError('The answer has no remediation steps.');
  const mask = (s: string) => maskValues(s, secrets);
  return {
    confidence: Math.min(1, Math.max(0, confidence)),
    summary: mask(text(o['summary'], 'summary', 500)),
    likely_cause: mask(text(o['likely_cause'], 'likely_cause', 1000)),
    remediation: (remediation as string[])
      .map((s) => mask(s.trim()).slice(0, 500))
      .filter((s) => s !== '')
      .slice(0, 8),
    analyzed_at: offsetTime(now.toISOString()),
    model_version: model,
  };
};

export const analyzeWithProvider = async (
  provider: AnalysisProvider,
  settings: AnalysisSettings,
  input: AnalysisInput,
  now: Date,
): Promise<FailureAnalysis> => {
  if (settings.provider_url === null || settings.provider_model === null)
    throw new ProviderError('The provider is not configured (provider_url, provider_model).');
  const answer = await provider.complete({
    url: settings.provider_url,
    model: settings.provider_model,
    apiKey: settings.provider_api_key,
    system: SYSTEM,
    prompt: providerPrompt(input),
    maxTokens: settings.provider_max_tokens,
    timeoutMs: settings.provider_timeout_seconds * 1000,
  });
  return parseProviderAnswer(answer, settings.provider_model, now, input.secretValues);
};
