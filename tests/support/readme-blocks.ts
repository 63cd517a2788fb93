// The examples of README.md as tests/e2e/readme.test.ts runs them: every ```sh block and the `run: |` shell of every
// ```yaml GitHub Actions step, in document order, each with the marker of the line right before its fence
// (`<!-- readme-test: skip: <reason> -->`, `<!-- readme-test: stop after N s, expecting "text", ... -->`,
// `<!-- readme-test: expecting "text", ... -->`: HTML comments, invisible when the README is rendered). The expected
// texts are JSON strings, to be printed by the block (stdout or stderr).
import { parse } from 'yaml';

export type Marker =
  | { readonly kind: 'run'; readonly expecting: readonly string[] }
  | { readonly kind: 'skip'; readonly reason: string }
  | { readonly kind: 'stop'; readonly afterSeconds: number; readonly expecting: readonly string[] };

interface BlockBase {
  /** 1-based line of README.md where the block's first line is. */
  readonly line: number;
  /** The heading the block is under. */
  readonly section: string;
  readonly marker: Marker;
}

export interface ShellBlock extends BlockBase {
  readonly kind: 'sh';
  readonly text: string;
}

/** A GitHub Actions step: its `env:` (values as written, `${{ ... }}` included) and its `run: |` shell. */
export interface ActionsStep extends BlockBase {
  readonly kind: 'actions';
  readonly name: string;
  readonly env: Readonly<Record<string, string>>;
  readonly run: string;
}

export type ReadmeBlock = ShellBlock | ActionsStep;

const MARKER = /^<!--\s*readme-test:\s*(.*?)\s*-->$/;

/** `"a", "b \"c\""` -> the JSON strings' values. */
const quoted = (list: string): string[] =>
  [...list.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]!}"`) as string);

export const parseMarker = (text: string): Marker => {
  const skip = /^skip:\s*(.+)$/.exec(text);
  if (skip !== null) return { kind: 'skip', reason: skip[1]! };
  const stop = /^stop after (\d+) s(?:, expecting (.+))?$/.exec(text);
  if (stop !== null) return { kind: 'stop', afterSeconds: Number(stop[1]), expecting: quoted(stop[2] ?? '') };
  const expecting = /^expecting (.+)$/.exec(text);
  if (expecting !== null) return { kind: 'run', expecting: quoted(expecting[1]!) };
  throw new Error(`README.md: a readme-test marker the test does not know: "${text}"`);
};

/** The runnable blocks of a README, in order. Other languages (js, plain fences) are not examples to run. */
export const readmeBlocks = (readme: string): ReadmeBlock[] => {
  const lines = readme.split('\n');
  const blocks: ReadmeBlock[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!;
    const fence = /^```(\w*)\s*$/.exec(line);
    if (fence === null) {
      if (/^#+ /.test(line)) section = line.replace(/^#+ /, '');
      continue;
    }
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`README.md: the block at line ${i + 1} is not closed`);
    const body = lines.slice(i + 1, end);
    const previous = /^\s*$/.test(lines[i - 1] ?? '') ? undefined : lines[i - 1];
    const markerText = previous === undefined ? undefined : MARKER.exec(previous)?.[1];
    const marker: Marker = markerText === undefined ? { kind: 'run', expecting: [] } : parseMarker(markerText);
    const base = { line: i + 2, section, marker };
    if (fence[1] === 'sh') blocks.push({ ...base, kind: 'sh', text: body.join('\n') });
    if (fence[1] === 'yaml') {
      const steps: unknown = parse(body.join('\n'));
      if (!Array.isArray(steps)) throw new Error(`README.md: the yaml block at line ${i + 1} is not a list of steps`);
      for (const step of steps as { name?: string; env?: Record<string, unknown>; run?: unknown }[]) {
        if (typeof step.run !== 'string') continue;
        const env = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, String(v)]));
        blocks.push({ ...base, kind: 'actions', name: step.name ?? '(unnamed)', env, run: step.run });
      }
    }
    i = end;
  }
  return blocks;
};

/**
 * The HTTP error statuses a README paragraph says its commands answer: the 4xx and 5xx numbers in the comments of the
 * paragraph (lines between blank lines) each line belongs to, by 1-based line of the block. A curl answering an error
 * the README does not announce there fails the test.
 */
export const announcedErrors = (text: string): Map<number, number[]> => {
  const lines = text.split('\n');
  const byLine = new Map<number, number[]>();
  let start = 0;
  const close = (end: number) => {
    const statuses = new Set<number>();
    for (const line of lines.slice(start, end)) {
      const comment = /(?:^|\s)#(.*)$/.exec(line)?.[1] ?? '';
      for (const m of comment.matchAll(/\b([45]\d\d)\b/g)) statuses.add(Number(m[1]));
    }
    for (let l = start; l < end; l += 1) byLine.set(l + 1, [...statuses]);
  };
  lines.forEach((line, i) => {
    if (line.trim() === '') {
      close(i);
      start = i + 1;
    }
  });
  close(lines.length);
  return byLine;
};
