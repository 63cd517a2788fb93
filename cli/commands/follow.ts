// deployer status / wait / logs: reading a deployment and following it.
import { boolFlag, parseDuration, stringFlag, type Parsed } from '../args.js';
import { COMMON_FLAGS, type Command } from '../command.js';
import { EXIT, UsageError } from '../errors.js';
import type { Deployment } from '../follow.js';
import { renderEvent, statusText } from '../render.js';
import { watchDeployment } from '../watch.js';

/** The single ID argument of a command. */
export const theId = (parsed: Parsed, command: string, what = 'ID'): string => {
  const [id, extra] = parsed.positionals;
  if (id === undefined) throw new UsageError(`missing ${what}`, command);
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`, command);
  return id;
};

const path = (id: string) => `/deployments/${encodeURIComponent(id)}`;

export const status: Command = {
  name: 'status',
  summary: "a deployment's state, progress and steps",
  usage: 'deployer status ID',
  description: 'Exits 0 whatever the state (use wait for an exit code that is the outcome).',
  flags: { ...COMMON_FLAGS },
  examples: ['deployer status 3f1c...', 'deployer status 3f1c... -o json | jq -r .state'],
  run: async (ctx, parsed) => {
    const id = theId(parsed, 'status');
    const deployment = await (await ctx.api()).get<Deployment>(path(id));
    ctx.print(ctx.json ? JSON.stringify(deployment, null, 2) : statusText(ctx.out, deployment));
    return EXIT.ok;
  },
};

const TIMEOUT = { kind: 'string', value: 'DURATION', help: 'stop waiting after 90s, 10m, 1h (exit 6)' } as const;

export const wait: Command = {
  name: 'wait',
  summary: 'wait for a deployment to end; the exit code is its outcome',
  usage: 'deployer wait ID [--timeout DURATION]',
  flags: { timeout: TIMEOUT, ...COMMON_FLAGS },
  examples: ['deployer wait 3f1c... --timeout 30m'],
  run: async (ctx, parsed) => {
    const id = theId(parsed, 'wait');
    const timeoutText = stringFlag(parsed, 'timeout');
    const timeoutMs = timeoutText === undefined ? undefined : parseDuration(timeoutText, 'timeout', 'wait');
    return watchDeployment(ctx, id, { logs: false, timeoutMs, timeoutText });
  },
};

interface HistoryEntry {
  readonly event_type: string;
  readonly level: string;
  readonly target_name: string | null;
  readonly message: string | null;
  readonly stdout: string | null;
  readonly stderr: string | null;
  readonly metadata: Record<string, unknown> | null;
}

export const logs: Command = {
  name: 'logs',
  summary: "a deployment's log; --follow streams it live to the end",
  usage: 'deployer logs ID [--follow [--timeout DURATION]]',
  description:
    'Without --follow: the stored log, oldest first. With --follow: the live stream, resumed after a dropped\n' +
    "connection where it left off; the exit code is then the deployment's outcome, as with wait.",
  flags: {
    follow: { kind: 'boolean', short: 'f', help: 'stream the log until the deployment ends' },
    timeout: TIMEOUT,
    ...COMMON_FLAGS,
  },
  examples: ['deployer logs 3f1c...', 'deployer logs 3f1c... --follow', 'deployer logs 3f1c... | grep -i error'],
  run: async (ctx, parsed) => {
    const id = theId(parsed, 'logs');
    const timeoutText = stringFlag(parsed, 'timeout');
    if (boolFlag(parsed, 'follow')) {
      const timeoutMs = timeoutText === undefined ? undefined : parseDuration(timeoutText, 'timeout', 'logs');
      return watchDeployment(ctx, id, { logs: true, timeoutMs, timeoutText });
    }
    if (timeoutText !== undefined) throw new UsageError('--timeout goes with --follow', 'logs');
    const api = await ctx.api();
    const entries: HistoryEntry[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = await api.get<HistoryEntry[]>(`${path(id)}/logs/history?offset=${offset}&limit=100`);
      entries.push(...page);
      if (page.length < 100) break;
    }
    if (ctx.json) {
      ctx.print(JSON.stringify(entries, null, 2));
      return EXIT.ok;
    }
    for (const entry of entries) {
      const lines = renderEvent(ctx.out, {
        event: 'log',
        data: { log: { ...entry, message: entry.message ?? entry.stdout ?? entry.stderr ?? '' } },
      });
      if (lines.length > 0) ctx.print(lines.join('\n'));
    }
    return EXIT.ok;
  },
};
