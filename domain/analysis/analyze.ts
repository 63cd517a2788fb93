// The default analyzer: the rule library (rules.ts) over a failed command's exit code, output tails, interpreter and
// action. It never fails and never leaves the service. A rule whose pattern and exit code both match beats one whose
// pattern alone matches, which beats an exit code alone; ties go to confidence, then to the library's order. Nothing
// matching: a low-confidence analysis quoting the most telling line.
import { offsetTime } from '../shared/time-format.js';
import type { AnalysisInput, FailureAnalysis } from './model.js';
import { maskValues } from './provider.js';
import { RULE_SET_VERSION, rules, type AnalysisRule } from './rules.js';

const QUOTE_MAX = 200;
const GENERIC_EXIT_CODES: ReadonlySet<number> = new Set([1, 2]);
const TELLING =
  /error|fatal|fail|denied|refused|cannot|can't|unable|not found|invalid|exception|panic|abort|mismatch|missing|unexpected/i;

interface Match {
  readonly rule: AnalysisRule;
  readonly rank: number;
  readonly confidence: number;
  readonly line: string;
  readonly groups: readonly string[];
}

const lines = (text: string): string[] =>
  text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');

/** The last line of the texts (stderr first) that a pattern matches, with its capture groups. */
const findLine = (rule: AnalysisRule, texts: readonly string[]): { line: string; groups: string[] } | undefined => {
  for (const text of texts) {
    const all = lines(text);
    for (let i = all.length - 1; i >= 0; i -= 1) {
      for (const pattern of rule.patterns) {
        const found = pattern.exec(all[i]!);
        if (found !== null) return { line: all[i]!, groups: found.slice(1).map((g) => g ?? '') };
      }
    }
  }
  return undefined;
};

const cut = (text: string): string => (text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX - 1)}…` : text);

const fill = (template: string, match: Match, input: AnalysisInput): string =>
  template.replace(/\{(match|exit_code|action|interpreter|\d)\}/g, (_, name: string) => {
    if (name === 'match') return match.line;
    if (name === 'exit_code') return String(input.exitCode ?? 'unknown');
    if (name === 'action') return input.actionName ?? 'the action';
    if (name === 'interpreter') return input.interpreter ?? 'the interpreter';
    return match.groups[Number(name) - 1] ?? '';
  });

/** The most telling line: the last one that sounds like an error (stderr first), else the last line at all. */
export const tellingLine = (input: Pick<AnalysisInput, 'stderrTail' | 'stdoutTail' | 'errorMessage'>): string => {
  for (const text of [input.stderrTail, input.stdoutTail, input.errorMessage ?? '']) {
    const found = lines(text)
      .reverse()
      .find((l) => TELLING.test(l));
    if (found !== undefined) return found;
  }
  return lines(input.stderrTail).at(-1) ?? lines(input.stdoutTail).at(-1) ?? input.errorMessage ?? '';
};

export const analyzeFailure = (input: AnalysisInput, now: Date): FailureAnalysis & { readonly rule_id: string } => {
  const texts = [input.stderrTail, input.stdoutTail, input.errorMessage ?? ''];
  const mask = (text: string) => maskValues(text, input.secretValues);
  const matches: Match[] = [];
  for (const rule of rules) {
    if (rule.interpreters !== undefined && input.interpreter !== null && !rule.interpreters.includes(input.interpreter))
      continue;
    const exit = input.exitCode !== null && rule.exitCodes?.includes(input.exitCode) === true;
    const found = findLine(rule, texts);
    // An exit code alone says something only when it is distinctive (127, 137, 124...): 1 and 2 are every error's.
    if (found === undefined && (!exit || GENERIC_EXIT_CODES.has(input.exitCode ?? 1))) continue;
    const rank = found !== undefined && exit ? 3 : found !== undefined ? 2 : 1;
    const confidence =
      rank === 3 ? Math.min(1, rule.confidence + 0.05) : rank === 2 ? rule.confidence : rule.confidence * 0.7;
    matches.push({
      rule,
      rank,
      confidence,
      line: cut(mask(found?.line ?? '')),
      groups: (found?.groups ?? []).map((g) => cut(mask(g))),
    });
  }
  matches.sort((a, b) => b.rank - a.rank || b.confidence - a.confidence);
  const best = matches[0];
  const base = { analyzed_at: offsetTime(now.toISOString()), model_version: `rules-${RULE_SET_VERSION}` };
  if (best === undefined) {
    const line = cut(mask(tellingLine(input)));
    const exit = input.exitCode === null ? 'an unknown exit code' : `exit code ${input.exitCode}`;
    return {
      ...base,
      rule_id: 'generic',
      confidence: 0.25,
      summary:
        line === ''
          ? `The command failed with ${exit} and printed nothing.`
          : `The command failed with ${exit}: ${line}`,
      likely_cause:
        line === ''
          ? 'The command exited with an error without printing why.'
          : `No known failure pattern matched; the most telling line of the output is quoted.`,
      remediation: [
        'Read the end of the step’s output (GET /deployments/{id}/analysis shows the last 2000 characters of each stream).',
        'Run the action’s script by hand on the target as the agent’s user to reproduce the failure.',
        'Make the script print what it does (`set -x` for shell scripts) and fail with a clear message.',
      ],
    };
  }
  return {
    ...base,
    rule_id: best.rule.id,
    confidence: Math.round(best.confidence * 100) / 100,
    summary: fill(best.rule.summary, best, input).replace(/: $/, '.'),
    likely_cause: fill(best.rule.likelyCause, best, input),
    remediation: best.rule.remediation.map((step) => fill(step, best, input)),
  };
};
