// deployer cancel / redeploy / queue / targets.
import { boolFlag, keyValue, listFlag, parseDuration, stringFlag } from '../args.js';
import { COMMON_FLAGS, type Command } from '../command.js';
import { EXIT, UsageError } from '../errors.js';
import { paint, stateText, table } from '../render.js';
import { listAll, resolveTargets } from '../resolve.js';
import { afterCreate, readVariables, STRATEGY_FLAGS, strategyBody } from './deploy.js';
import { theId } from './follow.js';

export const cancel: Command = {
  name: 'cancel',
  summary: 'cancel a running deployment',
  usage: 'deployer cancel ID [--reason TEXT]',
  flags: { reason: { kind: 'string', value: 'TEXT', help: 'kept for audit' }, ...COMMON_FLAGS },
  examples: ['deployer cancel 3f1c... --reason "wrong config"'],
  run: async (ctx, parsed) => {
    const id = theId(parsed, 'cancel');
    const reason = stringFlag(parsed, 'reason');
    const answer = await (
      await ctx.api()
    ).post<Record<string, unknown>>(
      `/deployments/${encodeURIComponent(id)}/cancel`,
      reason === undefined ? {} : { reason },
    );
    if (ctx.json) ctx.print(JSON.stringify(answer, null, 2));
    else ctx.note(`Deployment ${id} ${stateText(ctx.err, String(answer['state']))}`);
    return EXIT.ok;
  },
};

export const redeploy: Command = {
  name: 'redeploy',
  summary: "deploy a deployment's configuration again (flags override it)",
  usage: 'deployer redeploy ID [options] [--wait [--timeout DURATION]]',
  description: 'The same source, targets and variables; --var values are merged into the original ones.',
  flags: { ...STRATEGY_FLAGS, ...COMMON_FLAGS },
  examples: [
    'deployer redeploy 3f1c... --wait',
    'deployer redeploy 3f1c... --var NGINX_CONF=/etc/nginx/b.conf --priority 10',
  ],
  run: async (ctx, parsed) => {
    const id = theId(parsed, 'redeploy');
    const wait = boolFlag(parsed, 'wait');
    const timeoutText = stringFlag(parsed, 'timeout');
    if (timeoutText !== undefined && !wait) throw new UsageError('--timeout goes with --wait', 'redeploy');
    const timeoutMs = timeoutText === undefined ? undefined : parseDuration(timeoutText, 'timeout', 'redeploy');
    const body = strategyBody(parsed, 'redeploy');
    const variables = await readVariables(parsed, ctx.io, 'redeploy');
    if (variables !== undefined) body['variables'] = variables;
    const api = await ctx.api();
    const targetIds = await resolveTargets(api, listFlag(parsed, 'target'));
    if (targetIds.length > 0) body['target_ids'] = targetIds;
    const created = await api.request<Record<string, unknown>>(
      'POST',
      `/deployments/${encodeURIComponent(id)}/redeploy`,
      {
        body,
        headers: { 'idempotency-key': ctx.io.newId() },
      },
    );
    return afterCreate(ctx, api, created.body, { wait, timeoutMs, timeoutText });
  },
};

interface PendingRequest {
  readonly id: string;
  readonly status: string;
  readonly priority?: number;
  readonly queue_position?: number;
  readonly queued_at: string;
  readonly triggered_by?: string;
  readonly triggered_by_name?: string;
  readonly tenant_name?: string;
  readonly environment_name?: string;
  readonly waiting_reason?: string;
  readonly waiting_until?: string;
  readonly source_name?: string;
  readonly source_version?: string;
  readonly target_count?: number;
}

/** What a request deploys: `hello 1.0.0 on 2 targets`. */
const whatOf = (r: PendingRequest): string =>
  r.source_name === undefined
    ? '-'
    : `${r.source_name}${r.source_version === undefined ? '' : ` ${r.source_version}`}${
        r.target_count === undefined ? '' : ` on ${r.target_count} target${r.target_count === 1 ? '' : 's'}`
      }`;

export const queue: Command = {
  name: 'queue',
  summary: 'deployment requests waiting for an orchestration instance, and why',
  usage: 'deployer queue',
  flags: { ...COMMON_FLAGS },
  examples: ['deployer queue', 'deployer queue -o json'],
  run: async (ctx) => {
    const pending = (await (await ctx.api()).get<PendingRequest[]>('/deployments/pending?status=pending')).sort(
      (a, b) => (a.queue_position ?? Infinity) - (b.queue_position ?? Infinity),
    );
    if (ctx.json) {
      ctx.print(JSON.stringify(pending, null, 2));
      return EXIT.ok;
    }
    if (pending.length === 0) {
      ctx.note('Nothing is waiting.');
      return EXIT.ok;
    }
    ctx.print(
      table([
        ['POSITION', 'REQUEST', 'WHAT', 'PRIORITY', 'QUEUED AT (UTC)', 'BY', 'WHERE', 'WAITING FOR'],
        ...pending.map((r) => [
          String(r.queue_position ?? ''),
          r.id,
          whatOf(r),
          String(r.priority ?? ''),
          r.queued_at,
          r.triggered_by_name ?? r.triggered_by ?? '',
          [r.tenant_name, r.environment_name].filter(Boolean).join('/') || '-',
          r.waiting_reason
            ? `${r.waiting_reason}${r.waiting_until ? ` (until ${r.waiting_until})` : ''}`
            : 'a free orchestration instance',
        ]),
      ]),
    );
    return EXIT.ok;
  },
};

interface Target {
  readonly id: string;
  readonly short_id: string;
  readonly name: string;
  readonly status: string;
  readonly agent_version: string;
  readonly tags: readonly { key: string; value: string }[];
}

export const targets: Command = {
  name: 'targets',
  summary: 'targets with their status, agent version and tags',
  usage: 'deployer targets [--tag K=V]...',
  flags: { tag: { kind: 'list', value: 'K=V', help: 'only targets carrying every given tag' }, ...COMMON_FLAGS },
  examples: ['deployer targets', 'deployer targets --tag role=web --tag env=prod'],
  run: async (ctx, parsed) => {
    if (parsed.positionals.length > 0)
      throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`, 'targets');
    const tags = listFlag(parsed, 'tag').map((raw) => keyValue(raw, 'tag', 'targets'));
    const query =
      tags.length === 0 ? '' : `?tag=${encodeURIComponent(tags.map((t) => `${t.key}=${t.value}`).join(','))}`;
    const list = await listAll<Target>(await ctx.api(), `/targets${query}`);
    if (ctx.json) {
      ctx.print(JSON.stringify(list, null, 2));
      return EXIT.ok;
    }
    const tone = (s: string) => (s === 'online' ? 'green' : s === 'stale' ? 'yellow' : 'red') as 'green';
    ctx.print(
      table([
        ['NAME', 'ID', 'STATUS', 'VERSION', 'TAGS'],
        ...list.map((t) => [
          t.name,
          t.short_id,
          paint(ctx.out, tone(t.status), t.status),
          t.agent_version,
          t.tags.map((tag) => `${tag.key}=${tag.value}`).join(','),
        ]),
      ]),
    );
    return EXIT.ok;
  },
};
