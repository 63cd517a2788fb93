// What the command line prints: log lines (colored on a terminal, plain when piped or NO_COLOR is set), the progress
// line, tables and the final summary. Pure functions of their input, so tests read them as text.
import type { StreamEvent } from './follow.js';

export interface Style {
  readonly color: boolean;
}

const SGR = { reset: 0, bold: 1, dim: 2, red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36 } as const;
export type Tone = keyof typeof SGR;
export const paint = (style: Style, tone: Tone, text: string): string =>
  style.color ? `\x1b[${SGR[tone]}m${text}\x1b[0m` : text;

/** Whether to color a stream: a terminal, and neither NO_COLOR (https://no-color.org) nor TERM=dumb. */
export const colorWanted = (isTty: boolean, env: Readonly<Record<string, string | undefined>>): boolean =>
  isTty && !env['NO_COLOR'] && env['TERM'] !== 'dumb';

const TARGET_TONES: readonly Tone[] = ['cyan', 'magenta', 'blue', 'yellow', 'green'];
/** The same target always gets the same color. */
export const targetTone = (name: string): Tone => {
  let hash = 0;
  for (const char of name) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return TARGET_TONES[hash % TARGET_TONES.length] as Tone;
};

/** Control characters other than tab are dropped: the output is the target's, not ours to let it move the cursor. */
export const clean = (text: string): string => text.replace(/[\u0000-\u0008\u000b-\u001f\u007f\u009b]/g, '');

const STATE_TONES: Readonly<Record<string, Tone>> = {
  success: 'green',
  completed: 'green',
  failed: 'red',
  rolled_back: 'red',
  rolling_back: 'yellow',
  cancelled: 'yellow',
  running: 'cyan',
};
export const stateText = (style: Style, state: string): string => paint(style, STATE_TONES[state] ?? 'reset', state);

/**
 * The lines one stream event prints (none for pings and progress): output lines as `target | text` (stderr ones red
 * on a terminal), other log entries and step and state changes as `target · text`.
 */
export const renderEvent = (style: Style, event: StreamEvent): string[] => {
  const data = event.data ?? {};
  if (event.event === 'log') {
    const log = (data['log'] ?? {}) as Record<string, unknown>;
    const target = typeof log['target_name'] === 'string' ? log['target_name'] : 'deployer';
    const metadata = (log['metadata'] ?? {}) as Record<string, unknown>;
    const stream = metadata['stream'];
    const message = typeof log['message'] === 'string' ? log['message'] : '';
    const prefix = paint(style, targetTone(target), target);
    const lines = clean(message.replace(/\r?\n$/, '')).split(/\r?\n/);
    if (stream === 'stdout' || stream === 'stderr')
      return lines.map(
        (line) => `${prefix} ${paint(style, 'dim', '|')} ${stream === 'stderr' ? paint(style, 'red', line) : line}`,
      );
    const level = typeof log['level'] === 'string' ? log['level'] : 'info';
    const tone: Tone = level === 'error' ? 'red' : level === 'warn' || level === 'warning' ? 'yellow' : 'dim';
    return lines.map((line) => `${prefix} ${paint(style, 'dim', '·')} ${paint(style, tone, line)}`);
  }
  if (event.event === 'step_update') {
    const state = String(data['state'] ?? '');
    if (state !== 'failed' && state !== 'completed') return [];
    const exit = data['exit_code'] === null || data['exit_code'] === undefined ? '' : ` (exit ${data['exit_code']})`;
    const error =
      typeof data['error_message'] === 'string' && data['error_message'] ? `: ${clean(data['error_message'])}` : '';
    return [`${paint(style, 'dim', 'step')} ${stateText(style, state)}${exit}${error}`];
  }
  if (event.event === 'state_change') {
    const message =
      typeof data['message'] === 'string' && data['message'] ? ` ${paint(style, 'dim', clean(data['message']))}` : '';
    return [`${paint(style, 'bold', 'deployment')} ${stateText(style, String(data['new_state'] ?? ''))}${message}`];
  }
  return [];
};

export interface ProgressState {
  completed: number;
  failed: number;
  total: number;
  running: number;
}

/** The one-line progress (a terminal only): a bar, steps done, running and failed. */
export const progressLine = (style: Style, state: ProgressState, label: string): string => {
  const width = 20;
  const done = state.total === 0 ? 0 : Math.round((width * (state.completed + state.failed)) / state.total);
  const bar = `${'#'.repeat(done)}${'.'.repeat(width - done)}`;
  const failed = state.failed > 0 ? paint(style, 'red', `, ${state.failed} failed`) : '';
  return `${label} [${bar}] ${state.completed}/${state.total} steps done, ${state.running} running${failed}`;
};

/** Keeps the progress figures from the stream's events. */
export const trackProgress = (state: ProgressState, event: StreamEvent): boolean => {
  const data = event.data ?? {};
  if (event.event === 'progress') {
    if (typeof data['total_steps'] === 'number') state.total = data['total_steps'];
    if (typeof data['completed_steps'] === 'number')
      state.completed = Math.max(0, data['completed_steps'] - state.failed);
    return true;
  }
  if (event.event === 'step_update') {
    const s = data['state'];
    if (s === 'running') state.running += 1;
    if (s === 'failed' || s === 'completed') state.running = Math.max(0, state.running - 1);
    if (s === 'failed') state.failed += 1;
    return true;
  }
  return false;
};

/** Columns padded to their widest cell (colors are not counted). */
export const table = (rows: readonly (readonly string[])[]): string => {
  const visible = (cell: string) => cell.replace(/\x1b\[\d+m/g, '').length;
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, visible(cell))));
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - visible(cell))))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
};

const seconds = (ms: unknown) => (typeof ms === 'number' ? `${(ms / 1000).toFixed(1)} s` : '');

/** `<source> <version>`: what the deployment runs. */
export const sourceOf = (d: Record<string, unknown>): string => {
  const type = String(d['source_type'] ?? '');
  const name = d[`${type}_name`];
  const version = d[`${type}_version`];
  return `${type} ${name ?? '?'}${version ? ` ${version}` : ''}`;
};

/** The final line of a followed deployment. */
export const summary = (style: Style, d: Record<string, unknown>): string => {
  const steps = `${d['completed_steps'] ?? 0}/${d['total_steps'] ?? 0} steps${d['failed_steps'] ? `, ${d['failed_steps']} failed` : ''}`;
  const took = seconds(d['duration_ms']);
  const error = typeof d['error_message'] === 'string' && d['error_message'] ? `: ${clean(d['error_message'])}` : '';
  return `Deployment ${d['id']} ${stateText(style, String(d['state']))} (${sourceOf(d)}; ${steps}${took ? `; ${took}` : ''})${error}`;
};

/** `deployer status`: the deployment and its steps. */
export const statusText = (style: Style, d: Record<string, unknown>): string => {
  const lines = [
    `${paint(style, 'bold', String(d['id']))}  ${stateText(style, String(d['state']))}`,
    `  what:      ${sourceOf(d)}`,
    `  progress:  ${Math.round(Number(d['progress'] ?? 0) * 100)}% (${d['completed_steps'] ?? 0}/${d['total_steps'] ?? 0} steps, ${d['failed_steps'] ?? 0} failed)`,
    `  by:        ${d['triggered_by_name'] ?? d['triggered_by'] ?? ''}`,
    `  created:   ${d['created_at'] ?? ''}${d['completed_at'] ? `  completed: ${d['completed_at']}` : ''}`,
  ];
  if (typeof d['error_message'] === 'string' && d['error_message'])
    lines.push(`  error:     ${clean(d['error_message'])}`);
  const plan = d['plan'] as { steps?: Record<string, unknown>[] } | null | undefined;
  if (plan?.steps?.length) {
    lines.push('');
    lines.push(
      table([
        ['TARGET', 'ACTION', 'STATE', 'EXIT', 'TOOK'],
        ...plan.steps.map((s) => [
          String(s['target_name'] ?? s['target_id'] ?? ''),
          String(s['action_name'] ?? ''),
          stateText(style, String(s['state'] ?? '')),
          s['exit_code'] === null || s['exit_code'] === undefined ? '' : String(s['exit_code']),
          seconds(s['duration_ms']),
        ]),
      ]),
    );
  }
  return lines.join('\n');
};
