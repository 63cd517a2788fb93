// Deploy triggers (#/triggers), the caller's own (decisions.md, "Deploy triggers"): the list (deployments:read), a
// new trigger (deployments:create: what to deploy where, values taken from the call, filters), its secret shown once
// with a signed curl call to copy; enable / disable, edit its name, description, rules and filters, a new secret,
// delete (confirmed in the page). The API keeps no log of a trigger's calls: its last call's time is shown.
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from './api.js';
import { CopyButton, SecretOnce } from './copy-widgets.js';
import { FLEET_ONCE_NOTE, parseTags, TagChips, type Tag } from './fleet-widgets.js';
import { when } from './format.js';
import { IntegrationsNav } from './webhooks.js';
import { ConfirmButton, ErrorLine, NoticeLine, useChanges } from './widgets.js';

interface Filter {
  readonly field: string;
  readonly one_of: string[];
}
interface Rules {
  readonly variables: Record<string, string>;
  readonly version_requirement: string | null;
}
interface Trigger {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly request: {
    action_id?: string | null;
    sequence_id?: string | null;
    solution_id?: string | null;
    version_requirement?: string | null;
    target_ids?: string[];
    target_tags?: Tag[];
  };
  readonly rules: Rules;
  readonly filters: Filter[];
  readonly enabled: boolean;
  readonly hook_url: string;
  readonly last_triggered_at: string | null;
  readonly created_at: string;
}

type Kind = 'action' | 'sequence' | 'solution';
const PATHS: Record<Kind, string> = { action: '/actions', sequence: '/sequences', solution: '/solutions' };
const READ: Record<Kind, string> = { action: 'actions:read', sequence: 'sequences:read', solution: 'solutions:read' };

/** `NAME = path` lines as a record (blank lines dropped). */
const pairsOf = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')).trim(), line.slice(line.indexOf('=') + 1).trim()]),
  );
const pairsText = (record: Record<string, string>) =>
  Object.entries(record)
    .map(([k, v]) => `${k} = ${v}`)
    .join('\n');

/** `field = a, b` lines as filters. */
const filtersOf = (text: string): Filter[] =>
  Object.entries(pairsOf(text)).map(([field, values]) => ({
    field,
    one_of: values
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== ''),
  }));
const filtersText = (filters: readonly Filter[]) =>
  filters.map((f) => `${f.field} = ${f.one_of.join(', ')}`).join('\n');

/** A JSON body the trigger takes: each filter's first value, and a placeholder at each path a rule reads. */
export const sampleBody = (rules: Rules, filters: readonly Filter[]): string => {
  const body: Record<string, unknown> = {};
  const put = (path: string, value: string) => {
    const parts = path.split('.');
    let at = body;
    for (const part of parts.slice(0, -1)) {
      if (typeof at[part] !== 'object' || at[part] === null) at[part] = {};
      at = at[part] as Record<string, unknown>;
    }
    at[parts[parts.length - 1]!] = value;
  };
  for (const f of filters) if (f.one_of[0] !== undefined) put(f.field, f.one_of[0]);
  if (rules.version_requirement !== null) put(rules.version_requirement, '^1');
  for (const [name, path] of Object.entries(rules.variables)) put(path, `value of ${name}`);
  return JSON.stringify(body);
};

/** A shell word in single quotes. */
const quoted = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** The call a pipeline makes, signed the Standard Webhooks way (README, "Deploy from a webhook"). */
export const signedCurl = (hookUrl: string, secret: string | undefined, body: string) =>
  [
    secret === undefined
      ? "SECRET='whsec_...'   # the trigger's secret, shown when it was made (or after New secret)"
      : `SECRET=${quoted(secret)}`,
    `HOOK=${quoted(hookUrl)}`,
    `BODY=${quoted(body)}`,
    'ID="call-$(date +%s)-$$"; TS=$(date +%s)',
    `SIG=$(printf '%s.%s.%s' "$ID" "$TS" "$BODY" | openssl dgst -sha256 -mac HMAC \\`,
    `  -macopt "hexkey:$(printf %s "\${SECRET#whsec_}" | base64 -d | xxd -p -c 256)" -binary | base64)`,
    `curl -s -X POST "$HOOK" -H 'content-type: application/json' -H "webhook-id: $ID" \\`,
    `  -H "webhook-timestamp: $TS" -H "webhook-signature: v1,$SIG" -d "$BODY"`,
  ].join('\n');

const CurlExample = ({ id, trigger, secret }: { id: string; trigger: Trigger; secret?: string }) => {
  const text = signedCurl(trigger.hook_url, secret, sampleBody(trigger.rules, trigger.filters));
  return (
    <>
      <p>A signed call (Standard Webhooks: HMAC-SHA256 of id.timestamp.body), as a pipeline would make it:</p>
      <pre class="command" id={id} data-testid={id}>
        {text}
      </pre>
      <CopyButton text={text} select={id} label="Copy the signed call" />
    </>
  );
};

export const Triggers = ({ permissions }: { permissions: ReadonlySet<string> }) => {
  const [triggers, setTriggers] = useState<Trigger[]>([]);
  const [sources, setSources] = useState<Record<Kind, { id: string; name: string }[]>>({
    action: [],
    sequence: [],
    solution: [],
  });
  const [kind, setKind] = useState<Kind>('action');
  const [open, setOpen] = useState<{ id: string; mode: 'details' | 'edit' } | undefined>();
  const [secret, setSecret] = useState<{ trigger: Trigger; secret: string } | undefined>();
  const { error, notice, setError, change } = useChanges(() => load());
  const load = () =>
    api<Trigger[]>('GET', '/triggers').then(
      (answer) => setTriggers(answer),
      (e: unknown) => setError(errorText(e)),
    );
  useEffect(() => {
    void load();
    for (const k of Object.keys(PATHS) as Kind[])
      if (permissions.has(READ[k]))
        void api<{ data: { id: string; name: string }[] }>('GET', `${PATHS[k]}?limit=100`).then(
          (answer) => setSources((s) => ({ ...s, [k]: answer.data })),
          () => undefined,
        );
  }, []);

  const sourceOf = (t: Trigger) => {
    const r = t.request;
    const [k, id] =
      r.action_id != null
        ? (['action', r.action_id] as const)
        : r.sequence_id != null
          ? (['sequence', r.sequence_id] as const)
          : (['solution', r.solution_id ?? ''] as const);
    const name = sources[k].find((s) => s.id === id)?.name ?? id;
    return `${k} ${name}${r.version_requirement == null ? '' : ` ${r.version_requirement}`}`;
  };

  const rulesAndFilters = (form: FormData) => {
    const version = String(form.get('version_path') ?? '').trim();
    return {
      rules: {
        variables: pairsOf(String(form.get('variable_paths') ?? '')),
        version_requirement: version === '' ? null : version,
      },
      filters: filtersOf(String(form.get('filters') ?? '')),
    };
  };

  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const version = String(form.get('version_requirement') ?? '').trim();
    const description = String(form.get('description') ?? '').trim();
    const variables = pairsOf(String(form.get('variables') ?? ''));
    const body = {
      name: String(form.get('name') ?? '').trim(),
      ...(description === '' ? {} : { description }),
      request: {
        [`${kind}_id`]: String(form.get('source') ?? ''),
        ...(version === '' ? {} : { version_requirement: version }),
        target_tags: parseTags(String(form.get('target_tags') ?? '')),
        ...(form.get('match_all') === 'on' ? { target_tags_match_all: true } : {}),
        ...(Object.keys(variables).length === 0 ? {} : { variables }),
      },
      ...rulesAndFilters(form),
      enabled: form.get('enabled') === 'on',
    };
    let created: (Trigger & { secret: string }) | undefined;
    const ok = await change(async () => {
      created = await api<Trigger & { secret: string }>('POST', '/triggers', body);
    }, `Trigger ${body.name} created.`);
    if (ok && created !== undefined) {
      setSecret({ trigger: created, secret: created.secret });
      formElement.reset();
    }
  };

  const save = async (event: SubmitEvent, t: Trigger) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const description = String(form.get('description') ?? '').trim();
    const body = {
      name: String(form.get('name') ?? '').trim(),
      description: description === '' ? null : description,
      ...rulesAndFilters(form),
    };
    const ok = await change(
      () => api('PATCH', `/triggers/${encodeURIComponent(t.id)}`, body),
      `Trigger ${body.name} saved.`,
    );
    if (ok) setOpen(undefined);
  };

  const rotate = async (t: Trigger) => {
    let answer: { secret: string } | undefined;
    const ok = await change(async () => {
      answer = await api<{ secret: string }>('POST', `/triggers/${encodeURIComponent(t.id)}/rotate-secret`);
    }, `Trigger ${t.name} has a new secret; the old one no longer works.`);
    if (ok && answer !== undefined) setSecret({ trigger: t, secret: answer.secret });
  };

  const mayWrite = permissions.has('deployments:create');
  const toggle = (id: string, mode: 'details' | 'edit') =>
    setOpen(open?.id === id && open.mode === mode ? undefined : { id, mode });
  return (
    <section aria-labelledby="triggers-title">
      <h1 id="triggers-title">Deploy triggers</h1>
      <IntegrationsNav permissions={permissions} current="triggers" />
      <p class="muted">
        A trigger is a saved deployment that a signed call starts (a pipeline, a repository webhook): no API key lives
        in the pipeline. Only you see your triggers.
      </p>
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      {secret === undefined ? null : (
        <SecretOnce
          title={`Secret of ${secret.trigger.name}`}
          id="trigger-secret"
          secret={secret.secret}
          note={FLEET_ONCE_NOTE}
          copyLabel={`Copy secret of ${secret.trigger.name.toLowerCase()}`}
          focus="heading"
          details={
            <>
              <p>
                Its URL: <code data-testid="hook-url">{secret.trigger.hook_url}</code>
              </p>
              <CurlExample id="trigger-curl" trigger={secret.trigger} secret={secret.secret} />
            </>
          }
          onDone={() => setSecret(undefined)}
        />
      )}
      <div class="table-scroll" tabIndex={0} role="region" aria-label="Triggers table">
        <table class="list triggers">
          <caption class="visually-hidden">Your deploy triggers</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Deploys</th>
              <th scope="col">State</th>
              <th scope="col">Last called</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {triggers.map((t) => (
              <Fragment key={t.id}>
                <tr data-trigger-id={t.id}>
                  <td>
                    {t.name}
                    {t.description === null ? null : <div class="muted">{t.description}</div>}
                  </td>
                  <td>
                    {sourceOf(t)}
                    {(t.request.target_tags ?? []).length > 0 ? <TagChips tags={t.request.target_tags!} /> : null}
                    {(t.request.target_ids ?? []).length > 0 ? (
                      <span class="muted"> {t.request.target_ids!.length} chosen targets</span>
                    ) : null}
                  </td>
                  <td>
                    <span data-testid="trigger-state" class={t.enabled ? 'state ok' : 'state off'}>
                      {t.enabled ? 'enabled' : 'disabled'}
                    </span>
                  </td>
                  <td data-testid="last-called">{when(t.last_triggered_at)}</td>
                  <td class="row-actions">
                    <button
                      type="button"
                      aria-label={`Details of ${t.name}`}
                      aria-expanded={open?.id === t.id && open.mode === 'details'}
                      onClick={() => toggle(t.id, 'details')}
                    >
                      Details
                    </button>
                    {mayWrite ? (
                      <>
                        <button
                          type="button"
                          aria-label={`Edit ${t.name}`}
                          aria-expanded={open?.id === t.id && open.mode === 'edit'}
                          onClick={() => toggle(t.id, 'edit')}
                        >
                          Edit
                        </button>
                        <button
                          type="button"
                          aria-label={`${t.enabled ? 'Disable' : 'Enable'} ${t.name}`}
                          onClick={() =>
                            void change(
                              () =>
                                api(
                                  'POST',
                                  `/triggers/${encodeURIComponent(t.id)}/${t.enabled ? 'disable' : 'enable'}`,
                                ),
                              `Trigger ${t.name} ${t.enabled ? 'disabled' : 'enabled'}.`,
                            )
                          }
                        >
                          {t.enabled ? 'Disable' : 'Enable'}
                        </button>
                        <button type="button" aria-label={`New secret for ${t.name}`} onClick={() => void rotate(t)}>
                          New secret
                        </button>
                        <ConfirmButton
                          label="Delete"
                          what={t.name}
                          onConfirm={() =>
                            change(
                              () => api('DELETE', `/triggers/${encodeURIComponent(t.id)}`),
                              `Trigger ${t.name} deleted; its calls are refused from now on.`,
                            )
                          }
                        />
                      </>
                    ) : null}
                  </td>
                </tr>
                {open?.id === t.id && open.mode === 'details' ? (
                  <tr class="editor">
                    <td colSpan={5}>
                      <dl class="facts" aria-label={`Details of ${t.name}`}>
                        <dt>URL</dt>
                        <dd>
                          <code>{t.hook_url}</code>
                        </dd>
                        <dt>Version from the call</dt>
                        <dd>{t.rules.version_requirement ?? '—'}</dd>
                        <dt>Variables from the call</dt>
                        <dd>{pairsText(t.rules.variables) || '—'}</dd>
                        <dt>Filters</dt>
                        <dd>{filtersText(t.filters) || 'none: every call deploys'}</dd>
                        <dt>Created</dt>
                        <dd>{when(t.created_at)}</dd>
                      </dl>
                      <CurlExample id={`curl-${t.id}`} trigger={t} />
                    </td>
                  </tr>
                ) : null}
                {open?.id === t.id && open.mode === 'edit' ? (
                  <tr class="editor">
                    <td colSpan={5}>
                      <form class="stack-form" aria-label={`Edit ${t.name}`} onSubmit={(e) => void save(e, t)}>
                        <label>
                          Name <input name="name" defaultValue={t.name} required maxLength={255} />
                        </label>
                        <label>
                          Description <input name="description" defaultValue={t.description ?? ''} maxLength={1000} />
                        </label>
                        <RuleFields rules={t.rules} filters={t.filters} />
                        <div class="buttons">
                          <button type="submit">Save</button>
                          <button type="button" onClick={() => setOpen(undefined)}>
                            Close
                          </button>
                        </div>
                      </form>
                    </td>
                  </tr>
                ) : null}
              </Fragment>
            ))}
          </tbody>
        </table>
      </div>
      {triggers.length === 0 ? <p class="muted">No triggers yet.</p> : null}
      {mayWrite ? (
        <form class="stack-form" aria-label="New trigger" onSubmit={(e) => void create(e)}>
          <fieldset>
            <legend>New trigger</legend>
            <label>
              Name <input name="name" required maxLength={255} />
            </label>
            <label>
              Description <input name="description" maxLength={1000} />
            </label>
            <label>
              Deploys a
              <select value={kind} onChange={(e) => setKind((e.currentTarget as HTMLSelectElement).value as Kind)}>
                <option value="action">single action</option>
                <option value="sequence">sequence</option>
                <option value="solution">solution</option>
              </select>
            </label>
            <label>
              Which {kind}
              <select name="source" required>
                <option value="">Choose…</option>
                {sources[kind].map((s) => (
                  <option key={s.id} value={s.id}>
                    {s.name}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Version (a range; empty: the latest) <input name="version_requirement" placeholder="^1.2" />
            </label>
            <label>
              Targets with tags (key=value, comma-separated)
              <input name="target_tags" required placeholder="role=web, env=prod" />
            </label>
            <label>
              <input type="checkbox" name="match_all" /> Targets must have every tag
            </label>
            <label>
              Fixed variables (NAME = value, one a line)
              <textarea name="variables" rows={2} class="mono" />
            </label>
            <RuleFields rules={{ variables: {}, version_requirement: null }} filters={[]} />
            <label>
              <input type="checkbox" name="enabled" defaultChecked /> Enabled
            </label>
            <button type="submit">Create trigger</button>
          </fieldset>
        </form>
      ) : null}
    </section>
  );
};

/** What a call's JSON fills in, and which calls deploy at all. */
const RuleFields = ({ rules, filters }: { rules: Rules; filters: readonly Filter[] }) => (
  <>
    <label>
      Version from the call (a path in its JSON, e.g. release.version)
      <input name="version_path" defaultValue={rules.version_requirement ?? ''} />
    </label>
    <label>
      Variables from the call (NAME = path, one a line)
      <textarea name="variable_paths" rows={2} class="mono" defaultValue={pairsText(rules.variables)} />
    </label>
    <label>
      Deploy only when (path = value, value…; one a line, e.g. ref = refs/heads/main)
      <textarea name="filters" rows={2} class="mono" defaultValue={filtersText(filters)} />
    </label>
  </>
);
