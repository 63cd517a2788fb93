// deployer deploy: POST /deployments (or /deployments/preview) from flags, then with --wait the queue and the log.
import type { Api } from '../api.js';
import { boolFlag, intFlag, keyValue, listFlag, oneOf, parseDuration, stringFlag, type Parsed } from '../args.js';
import { COMMON_FLAGS, type Command, type Context, type Io } from '../command.js';
import { CliError, EXIT, UsageError } from '../errors.js';
import { paint, table } from '../render.js';
import { resolveSource, resolveTargets, type SourceKind } from '../resolve.js';
import { timeoutMessage, watchDeployment, withTimeout } from '../watch.js';
import { sleep } from '../api.js';

const NAME = 'deploy';

const TARGET_MODES = ['sequential', 'parallel', 'rolling'] as const;
const FAILURE_STRATEGIES = ['stop_on_first_failure', 'continue_on_failure', 'ignore_failures'] as const;
const ROLLBACK_STRATEGIES = ['none', 'failed_target_only', 'all_executed'] as const;

/** Flags that shape the request, shared with `redeploy` where the API allows. */
export const STRATEGY_FLAGS = {
  'target-mode': { kind: 'string', value: 'sequential|parallel|rolling', help: 'how targets run' },
  'batch-size': { kind: 'string', value: 'N', help: 'targets per batch with --target-mode rolling' },
  'failure-strategy': { kind: 'string', value: FAILURE_STRATEGIES.join('|'), help: 'what a failed step does' },
  'rollback-strategy': { kind: 'string', value: ROLLBACK_STRATEGIES.join('|'), help: 'what is rolled back' },
  priority: { kind: 'string', value: '-100..100', help: 'queue priority, higher first' },
  'command-timeout': { kind: 'string', value: 'SECONDS', help: 'per command, 1 to 86400' },
  'max-retries': { kind: 'string', value: '0..10', help: 'per command' },
  var: { kind: 'list', value: 'K=V', help: 'a variable (repeat)' },
  'secret-var': {
    kind: 'list',
    value: 'K',
    help: 'a variable read from env K, else stdin (a line each, in order); never argv',
  },
  target: { kind: 'list', value: 'ID|NAME', help: 'a target by id, short id or name (repeat)' },
  tag: { kind: 'list', value: 'K=V', help: 'targets carrying this tag (repeat: any of them)' },
  'override-freeze': { kind: 'boolean', help: 'deploy through an active freeze (admin); needs --reason' },
  reason: { kind: 'string', value: 'TEXT', help: 'why the freeze is overridden (kept for audit)' },
  wait: { kind: 'boolean', help: 'follow the log to the end; the exit code is the outcome' },
  timeout: { kind: 'string', value: 'DURATION', help: 'with --wait: stop waiting after 90s, 10m, 1h (exit 6)' },
} as const;

/** The request fields the strategy flags give (those present). */
export const strategyBody = (parsed: Parsed, command: string): Record<string, unknown> => {
  const body: Record<string, unknown> = {};
  const mode = oneOf(stringFlag(parsed, 'target-mode'), TARGET_MODES, 'target-mode', command);
  const batch = intFlag(parsed, 'batch-size', 1, 10_000, command);
  if (batch !== undefined && mode !== 'rolling')
    throw new UsageError('--batch-size goes with --target-mode rolling', command);
  if (mode === 'rolling') body['target_mode'] = { rolling: { batch_size: batch ?? 1 } };
  else if (mode !== undefined) body['target_mode'] = mode;
  const failure = oneOf(stringFlag(parsed, 'failure-strategy'), FAILURE_STRATEGIES, 'failure-strategy', command);
  if (failure !== undefined) body['failure_strategy'] = failure;
  const rollback = oneOf(stringFlag(parsed, 'rollback-strategy'), ROLLBACK_STRATEGIES, 'rollback-strategy', command);
  if (rollback !== undefined) body['rollback_strategy'] = rollback;
  const priority = intFlag(parsed, 'priority', -100, 100, command);
  if (priority !== undefined) body['priority'] = priority;
  const timeout = intFlag(parsed, 'command-timeout', 1, 86_400, command);
  if (timeout !== undefined) body['timeout_seconds'] = timeout;
  const retries = intFlag(parsed, 'max-retries', 0, 10, command);
  if (retries !== undefined) body['max_retries'] = retries;
  const tags = listFlag(parsed, 'tag').map((raw) => keyValue(raw, 'tag', command));
  if (tags.length > 0) body['target_tags'] = tags;
  if (boolFlag(parsed, 'override-freeze')) {
    const reason = stringFlag(parsed, 'reason');
    if (!reason?.trim()) throw new UsageError('--override-freeze needs --reason TEXT', command);
    body['override_freeze'] = true;
    body['override_reason'] = reason;
  } else if (stringFlag(parsed, 'reason') !== undefined) {
    throw new UsageError('--reason goes with --override-freeze', command);
  }
  return body;
};

/** --var K=V and --secret-var K (env K, else the next stdin line): the variables object, or undefined. */
export const readVariables = async (parsed: Parsed, io: Io, command: string) => {
  const variables: Record<string, string> = {};
  for (const raw of listFlag(parsed, 'var')) {
    const { key, value } = keyValue(raw, 'var', command);
    variables[key] = value;
  }
  for (const key of listFlag(parsed, 'secret-var')) {
    if (key.includes('='))
      throw new UsageError(
        `--secret-var takes a name only (got "${key.slice(0, key.indexOf('='))}=..."): the value comes from env ${key.slice(0, key.indexOf('='))} or stdin, never from the command line`,
        command,
      );
    // On a terminal the value is asked without echo; piped, it is stdin's next line.
    const value = io.env[key] ?? (await io.prompt(`Value of ${key}: `, true));
    if (value === undefined)
      throw new UsageError(`--secret-var ${key}: no environment variable ${key} and no line left on stdin`, command);
    variables[key] = value;
  }
  return Object.keys(variables).length === 0 ? undefined : variables;
};

interface Queued {
  readonly pending_request_id: string;
  readonly queue_position?: number;
  readonly message?: string;
}
interface Started {
  readonly deployment_id: string;
  readonly deployment: Record<string, unknown>;
}
interface PendingRequest {
  readonly id: string;
  readonly status: string;
  readonly queue_position?: number;
  readonly waiting_reason?: string;
  readonly waiting_until?: string;
  readonly deployment_id?: string;
  readonly error_message?: string;
}

/** Waits for a queued request to become a deployment, printing its position and reason when they change. */
export const waitForDispatch = async (
  ctx: Context,
  api: Api,
  id: string,
  signal: AbortSignal | undefined,
  pollMs = 2000,
): Promise<string> => {
  let shown = '';
  for (;;) {
    const all = await api.get<PendingRequest[]>('/deployments/pending', { signal });
    const request = all.find((r) => r.id === id);
    if (request === undefined) throw new CliError(EXIT.refused, `pending request ${id} is no longer listed`);
    if (request.status === 'dispatched' && request.deployment_id) return request.deployment_id;
    if (request.status === 'cancelled') {
      ctx.note(`Pending request ${id} was cancelled before it started.`);
      throw new CliError(EXIT.cancelled, `pending request ${id} cancelled`);
    }
    if (request.status === 'failed')
      throw new CliError(EXIT.failed, `pending request ${id} failed: ${request.error_message ?? 'no reason given'}`);
    const line = `Queued: position ${request.queue_position ?? '?'}; ${
      request.waiting_reason
        ? `waiting: ${request.waiting_reason}${request.waiting_until ? ` (until ${request.waiting_until})` : ''}`
        : 'waiting for a free orchestration instance'
    }`;
    if (line !== shown) ctx.note(line);
    shown = line;
    await sleep(pollMs, signal);
  }
};

const previewText = (ctx: Context, preview: Record<string, unknown>): string => {
  const plan = (preview['plan'] ?? {}) as { steps?: Record<string, unknown>[]; target_count?: number };
  const summary = (preview['target_summary'] ?? {}) as Record<string, number>;
  const lines = [
    `Preview: ${preview['source_type']} ${preview['source_name']} ${preview['source_version']} on ${summary['total'] ?? plan.target_count ?? 0} target(s) (${summary['online'] ?? 0} online, ${summary['stale'] ?? 0} stale, ${summary['offline'] ?? 0} offline)`,
    '',
    table([
      ['#', 'TARGET', 'SEQUENCE', 'ACTION'],
      ...(plan.steps ?? []).map((s, i) => [
        String(i + 1),
        String(s['target_name'] ?? s['target_id'] ?? ''),
        String(s['sequence_name'] ?? ''),
        String(s['action_name'] ?? ''),
      ]),
    ]),
  ];
  const variables = Object.entries((preview['variables'] ?? {}) as Record<string, string>);
  if (variables.length > 0) lines.push('', 'Variables:', ...variables.map(([k, v]) => `  ${k}=${v}`));
  const freezes = (preview['active_freezes'] ?? []) as { name?: string; ends_at?: string }[];
  for (const f of freezes) lines.push(paint(ctx.out, 'yellow', `frozen: ${f.name ?? ''} until ${f.ends_at ?? '?'}`));
  for (const w of (preview['warnings'] ?? []) as string[]) lines.push(paint(ctx.out, 'yellow', `warning: ${w}`));
  return lines.join('\n');
};

export const deploy: Command = {
  name: NAME,
  summary: 'start a deployment (and with --wait follow it to its end)',
  usage: 'deployer deploy (--action|--sequence|--solution) REF (--target ID|NAME | --tag K=V)... [options]',
  description:
    'REF is a slug (actions) or name (sequences, solutions), an id or a short id. Without --wait it prints the\n' +
    "deployment's id (or the pending request's, when queued) and exits 0 once the service accepted it.",
  flags: {
    action: { kind: 'string', value: 'REF', help: 'deploy this action (slug, id or short id)' },
    sequence: { kind: 'string', value: 'REF', help: 'deploy this sequence (name, id or short id)' },
    solution: { kind: 'string', value: 'REF', help: 'deploy this solution (name, id or short id)' },
    version: { kind: 'string', value: 'RANGE', help: 'a semver range such as ^1.2 (default: the latest)' },
    'match-all-tags': { kind: 'boolean', help: 'a target must carry every --tag (default: any)' },
    ...STRATEGY_FLAGS,
    'deployment-timeout': { kind: 'string', value: 'SECONDS', help: 'overall, 0 = none' },
    prompt: { kind: 'list', value: 'K=V', help: 'a prompted value (repeat)' },
    tenant: { kind: 'string', value: 'ID', help: 'tenant id or short id (with --environment)' },
    environment: { kind: 'string', value: 'ID', help: 'environment id or short id' },
    'bypass-cache': { kind: 'boolean', help: 'fetch scripts fresh' },
    preview: { kind: 'boolean', help: 'print the plan and warnings; start nothing' },
    'dry-run': { kind: 'boolean', help: 'the same as --preview' },
    ...COMMON_FLAGS,
  },
  examples: [
    'deployer deploy --action restart-nginx --version "^1.1" --tag role=web --wait',
    'deployer deploy --sequence "Web release" --target local-1 --target local-2 --target-mode rolling --batch-size 1 --wait --timeout 15m',
    'DB_PASSWORD=... deployer deploy --action migrate --tag role=db --secret-var DB_PASSWORD --wait',
    'deployer deploy --action restart-nginx --tag role=web --preview',
    'deployer deploy --action hotfix --tag role=web --override-freeze --reason "incident 42" --wait -o json',
  ],
  run: async (ctx, parsed) => {
    if (parsed.positionals.length > 0)
      throw new UsageError(
        `unexpected argument "${parsed.positionals[0]}" (name the source with --action, --sequence or --solution)`,
        NAME,
      );
    const sources = (['action', 'sequence', 'solution'] as const).filter((k) => stringFlag(parsed, k) !== undefined);
    if (sources.length !== 1)
      throw new UsageError(
        sources.length === 0
          ? 'name what to deploy: --action, --sequence or --solution'
          : `give only one of --${sources.join(', --')}`,
        NAME,
      );
    const kind = sources[0] as SourceKind;
    const targets = listFlag(parsed, 'target');
    if (targets.length === 0 && listFlag(parsed, 'tag').length === 0)
      throw new UsageError('name the targets: --target ID|NAME or --tag K=V (repeat either)', NAME);
    const preview = boolFlag(parsed, 'preview') || boolFlag(parsed, 'dry-run');
    const wait = boolFlag(parsed, 'wait');
    const timeoutText = stringFlag(parsed, 'timeout');
    if (timeoutText !== undefined && !wait) throw new UsageError('--timeout goes with --wait', NAME);
    const timeoutMs = timeoutText === undefined ? undefined : parseDuration(timeoutText, 'timeout', NAME);
    const body: Record<string, unknown> = strategyBody(parsed, NAME);
    const version = stringFlag(parsed, 'version');
    if (version !== undefined) body['version_requirement'] = version;
    if (boolFlag(parsed, 'match-all-tags')) body['target_tags_match_all'] = true;
    const overall = intFlag(parsed, 'deployment-timeout', 0, 31_536_000, NAME);
    if (overall !== undefined) body['deployment_timeout_seconds'] = overall;
    const prompted = listFlag(parsed, 'prompt').map((raw) => keyValue(raw, 'prompt', NAME));
    if (prompted.length > 0) body['prompted_values'] = Object.fromEntries(prompted.map((p) => [p.key, p.value]));
    const tenant = stringFlag(parsed, 'tenant');
    const environment = stringFlag(parsed, 'environment');
    if (tenant !== undefined) body['tenant_id'] = tenant;
    if (environment !== undefined) body['environment_id'] = environment;
    if (boolFlag(parsed, 'bypass-cache')) body['bypass_cache'] = true;
    const variables = await readVariables(parsed, ctx.io, NAME);
    if (variables !== undefined) body['variables'] = variables;

    const api = await ctx.api();
    body[`${kind}_id`] = await resolveSource(api, kind, stringFlag(parsed, kind) as string);
    const targetIds = await resolveTargets(api, targets);
    if (targetIds.length > 0) body['target_ids'] = targetIds;

    if (preview) {
      const answer = await api.post<Record<string, unknown>>('/deployments/preview', body);
      ctx.print(ctx.json ? JSON.stringify(answer, null, 2) : previewText(ctx, answer));
      return EXIT.ok;
    }
    // One key per invocation: a retry after a network error or a 5xx sends the same key, so it never starts twice.
    const created = await api.request<Started | Queued>('POST', '/deployments', {
      body,
      headers: { 'idempotency-key': ctx.io.newId() },
    });
    return afterCreate(ctx, api, created.body, { wait, timeoutMs, timeoutText });
  },
};

/** What follows a create (or a redeploy): the ids, or with --wait the queue and the log. */
export const afterCreate = async (
  ctx: Context,
  api: Api,
  answer: Started | Queued | Record<string, unknown>,
  options: { wait: boolean; timeoutMs?: number; timeoutText?: string },
): Promise<number> => {
  const started = answer as Partial<Started> & Partial<Queued> & { id?: string };
  const deploymentId = started.deployment_id ?? started.id;
  if (deploymentId === undefined && started.pending_request_id !== undefined) {
    const pendingId = started.pending_request_id;
    ctx.note(
      `Queued as pending request ${pendingId}${started.queue_position ? ` (position ${started.queue_position})` : ''}: ${started.message ?? 'no orchestration instance is free'}`,
    );
    if (!options.wait) {
      ctx.print(ctx.json ? JSON.stringify(answer, null, 2) : pendingId);
      return EXIT.ok;
    }
    const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
    const id = await withTimeout(
      options.timeoutMs,
      () => timeoutMessage(pendingId, options.timeoutText, 'pending request'),
      (signal) => waitForDispatch(ctx, api, pendingId, signal),
    );
    ctx.note(`Started deployment ${id}`);
    return watchDeployment(ctx, id, {
      logs: true,
      timeoutMs: deadline === undefined ? undefined : Math.max(1, deadline - Date.now()),
      timeoutText: options.timeoutText,
    });
  }
  if (deploymentId === undefined) throw new CliError(EXIT.unreachable, 'the service answered without a deployment id');
  if (!options.wait) {
    ctx.print(ctx.json ? JSON.stringify(started.deployment ?? answer, null, 2) : deploymentId);
    return EXIT.ok;
  }
  ctx.note(`Started deployment ${deploymentId}`);
  return watchDeployment(ctx, deploymentId, {
    logs: true,
    timeoutMs: options.timeoutMs,
    timeoutText: options.timeoutText,
  });
};
