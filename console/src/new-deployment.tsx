// A new deployment: an action (or sequence, or solution) and a version range, targets by list or by tags with a
// live count of the targets that match, the strategy fields and variables; a preview first (plan, warnings, target
// health), then create. A freeze shows its reason and, for admins, the override with its reason field.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, isApiError, type ApiError, type User } from './api.js';
import { when } from './format.js';

interface Source {
  readonly id: string;
  readonly name: string;
  readonly latest_version?: string | null;
}

/** A variable the chosen action version declares (GET /actions/{id}/versions/{version}). */
interface Declared {
  readonly name: string;
  readonly description: string | null;
  readonly required: boolean;
  readonly default: string | null;
  readonly secret: boolean;
}

interface FrozenDetails {
  readonly active_freezes?: { id: string; name: string; ends_at: string }[];
  readonly can_override?: boolean;
}

interface TargetRow {
  readonly id: string;
  readonly name: string;
  readonly status: string;
  readonly tags: { key: string; value: string }[];
}

interface Preview {
  readonly plan: { steps: { id: string; target_name: string; action_name: string; action_version: string }[] };
  readonly warnings: string[];
  readonly target_summary: { total: number; online: number; offline: number; stale: number };
  readonly source_name: string;
  readonly source_version: string | null;
}

type Kind = 'action' | 'sequence' | 'solution';
const PATHS: Record<Kind, string> = { action: '/actions', sequence: '/sequences', solution: '/solutions' };

const parseTags = (text: string) =>
  text
    .split(',')
    .map((pair) => pair.trim())
    .filter((pair) => pair.includes('='))
    .map((pair) => {
      const [key, ...value] = pair.split('=');
      return { key: key!.trim(), value: value.join('=').trim() };
    });

const parseVariables = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')).trim(), line.slice(line.indexOf('=') + 1)]),
  );

/** `1 target`, `2 targets`. */
const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export const NewDeployment = (_props: { user: User }) => {
  const [kind, setKind] = useState<Kind>('action');
  const [sources, setSources] = useState<Source[]>([]);
  const [targets, setTargets] = useState<TargetRow[]>([]);
  const [sourceId, setSourceId] = useState('');
  const [version, setVersion] = useState('');
  const [byTags, setByTags] = useState(false);
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [tags, setTags] = useState('');
  const [matchAll, setMatchAll] = useState(false);
  // The API's default order (api.md: target_mode defaults to sequential).
  const [mode, setMode] = useState('sequential');
  const [failure, setFailure] = useState('stop_on_first_failure');
  const [priority, setPriority] = useState(0);
  const [variables, setVariables] = useState('');
  const [declared, setDeclared] = useState<Declared[]>([]);
  const [declaredValues, setDeclaredValues] = useState<Record<string, string>>({});
  const [preview, setPreview] = useState<Preview | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  const [override, setOverride] = useState('');
  const [busy, setBusy] = useState(false);
  // The environment deployed to (a freeze of an environment applies to deployments to it); none when unreadable.
  const [environments, setEnvironments] = useState<{ id: string; name: string }[]>([]);
  const [environmentId, setEnvironmentId] = useState('');

  useEffect(() => {
    setSourceId('');
    api<{ data: Source[] }>('GET', `${PATHS[kind]}?limit=100`).then(
      (answer) => setSources(answer.data),
      () => setSources([]),
    );
  }, [kind]);
  useEffect(() => {
    api<{ data: TargetRow[] }>('GET', '/targets?limit=100').then(
      (answer) => setTargets(answer.data),
      () => setTargets([]),
    );
    api<{ data: { id: string; name: string }[] }>('GET', '/environments?limit=100').then(
      (answer) => setEnvironments(answer.data),
      () => setEnvironments([]),
    );
  }, []);

  // The chosen action's variables, as its latest version declares them: one field each (required, default, secret).
  useEffect(() => {
    setDeclared([]);
    setDeclaredValues({});
    const source = sources.find((s) => s.id === sourceId);
    if (kind !== 'action' || source?.latest_version == null) return;
    let stale = false;
    api<{ variables: Declared[] }>(
      'GET',
      `/actions/${encodeURIComponent(source.id)}/versions/${encodeURIComponent(source.latest_version)}`,
    ).then(
      (v) => !stale && setDeclared(v.variables),
      () => undefined,
    );
    return () => {
      stale = true;
    };
  }, [kind, sourceId, sources]);

  const matching = useMemo(() => {
    if (!byTags) return chosen.size;
    const wanted = parseTags(tags);
    if (wanted.length === 0) return 0;
    const has = (t: TargetRow, w: { key: string; value: string }) =>
      t.tags.some((tag) => tag.key === w.key && tag.value === w.value);
    return targets.filter((t) => (matchAll ? wanted.every((w) => has(t, w)) : wanted.some((w) => has(t, w)))).length;
  }, [byTags, chosen, tags, matchAll, targets]);

  const body = (extra: Record<string, unknown> = {}) => ({
    [`${kind}_id`]: sourceId,
    ...(version.trim() === '' ? {} : { version_requirement: version.trim() }),
    ...(environmentId === '' ? {} : { environment_id: environmentId }),
    ...(byTags ? { target_tags: parseTags(tags), target_tags_match_all: matchAll } : { target_ids: [...chosen] }),
    target_mode: mode,
    failure_strategy: failure,
    priority,
    variables: {
      ...parseVariables(variables),
      ...Object.fromEntries(Object.entries(declaredValues).filter(([, value]) => value !== '')),
    },
    ...extra,
  });

  const run = async (what: 'preview' | 'create', extra: Record<string, unknown> = {}) => {
    setBusy(true);
    setError(undefined);
    try {
      if (what === 'preview') setPreview(await api<Preview>('POST', '/deployments/preview', body()));
      else {
        const created = await api<{ pending: boolean; deployment_id?: string }>('POST', '/deployments', body(extra));
        window.location.hash = created.pending ? '#/queue' : `#/deployments/${created.deployment_id}`;
      }
    } catch (e) {
      setError(isApiError(e) ? e : { status: 0, code: 'NETWORK', message: 'The service cannot be reached.' });
    } finally {
      setBusy(false);
    }
  };

  const frozen = error?.code === 'DEPLOYMENT_FROZEN' ? ((error.details ?? {}) as FrozenDetails) : undefined;
  return (
    <section aria-labelledby="new-title">
      <h1 id="new-title">New deployment</h1>
      <form
        class="stack-form"
        onSubmit={(e) => {
          e.preventDefault();
          void run('preview');
        }}
      >
        <fieldset>
          <legend>What</legend>
          <label for="new-kind">Kind</label>
          <select id="new-kind" value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value as Kind)}>
            <option value="action">Action</option>
            <option value="sequence">Sequence</option>
            <option value="solution">Solution</option>
          </select>
          <label for="new-source">{kind[0]!.toUpperCase() + kind.slice(1)}</label>
          <select
            id="new-source"
            required
            value={sourceId}
            onChange={(e) => setSourceId((e.target as HTMLSelectElement).value)}
          >
            <option value="">Choose…</option>
            {sources.map((s) => (
              <option value={s.id}>
                {s.name}
                {s.latest_version ? ` (${s.latest_version})` : ''}
              </option>
            ))}
          </select>
          <label for="new-version">Version range</label>
          <input
            id="new-version"
            value={version}
            placeholder="latest, or ^1.2"
            onInput={(e) => setVersion((e.target as HTMLInputElement).value)}
          />
        </fieldset>
        <fieldset>
          <legend>Where</legend>
          {environments.length === 0 ? null : (
            <label>
              Environment{' '}
              <select value={environmentId} onChange={(e) => setEnvironmentId((e.target as HTMLSelectElement).value)}>
                <option value="">None</option>
                {environments.map((env) => (
                  <option key={env.id} value={env.id}>
                    {env.name}
                  </option>
                ))}
              </select>
            </label>
          )}
          <label>
            <input type="radio" name="by" checked={!byTags} onChange={() => setByTags(false)} /> Choose targets
          </label>
          <label>
            <input type="radio" name="by" checked={byTags} onChange={() => setByTags(true)} /> Targets with tags
          </label>
          {byTags ? (
            <>
              <label>
                Tags{' '}
                <input
                  value={tags}
                  placeholder="role=web, env=prod"
                  onInput={(e) => setTags((e.target as HTMLInputElement).value)}
                />
              </label>
              <label>
                <input
                  type="checkbox"
                  checked={matchAll}
                  onChange={(e) => setMatchAll((e.target as HTMLInputElement).checked)}
                />{' '}
                A target must have every tag
              </label>
            </>
          ) : (
            <div class="choices">
              {targets.map((t) => (
                <label>
                  <input
                    type="checkbox"
                    value={t.id}
                    checked={chosen.has(t.id)}
                    onChange={(e) => {
                      const next = new Set(chosen);
                      if ((e.target as HTMLInputElement).checked) next.add(t.id);
                      else next.delete(t.id);
                      setChosen(next);
                    }}
                  />{' '}
                  {t.name} <span class="muted">({t.status})</span>
                </label>
              ))}
            </div>
          )}
          <p role="status" data-testid="matching">
            {matching} {matching === 1 ? 'target matches' : 'targets match'}
          </p>
        </fieldset>
        <fieldset>
          <legend>How</legend>
          <label>
            Order{' '}
            <select value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value)}>
              <option value="sequential">One target after another</option>
              <option value="parallel">All at once</option>
            </select>
          </label>
          <label>
            On failure{' '}
            <select value={failure} onChange={(e) => setFailure((e.target as HTMLSelectElement).value)}>
              <option value="stop_on_first_failure">Stop at the first failure</option>
              <option value="continue_on_failure">Continue</option>
              <option value="ignore_failures">Ignore failures</option>
            </select>
          </label>
          <label>
            Priority (-100 to 100){' '}
            <input
              type="number"
              min={-100}
              max={100}
              value={priority}
              onInput={(e) => setPriority(Number((e.target as HTMLInputElement).value))}
            />
          </label>
          {declared.length === 0 ? null : (
            <fieldset class="variables" data-testid="declared-variables">
              <legend>Variables of this action</legend>
              {declared.map((d) => (
                <label key={d.name}>
                  <code>{d.name}</code>
                  {d.required ? <span class="muted"> (required)</span> : null}
                  {d.description ? <span class="muted"> {d.description}</span> : null}{' '}
                  <input
                    name={`var-${d.name}`}
                    type={(d.secret ? 'password' : 'text') as 'text'}
                    autocomplete="off"
                    required={d.required && d.default === null}
                    placeholder={d.secret ? 'secret' : (d.default ?? '')}
                    value={declaredValues[d.name] ?? ''}
                    onInput={(e) =>
                      setDeclaredValues({ ...declaredValues, [d.name]: (e.target as HTMLInputElement).value })
                    }
                  />
                </label>
              ))}
            </fieldset>
          )}
          <label>
            {declared.length === 0 ? 'Variables' : 'Other variables'} (NAME=value, one per line)
            <textarea
              rows={3}
              value={variables}
              onInput={(e) => setVariables((e.target as HTMLTextAreaElement).value)}
            />
          </label>
        </fieldset>
        <button type="submit" disabled={busy || sourceId === ''}>
          Preview
        </button>
      </form>
      {error === undefined ? null : (
        <div role="alert" class="error">
          {frozen === undefined ? (
            <p>{error.message}</p>
          ) : (
            <>
              <p>Deployments are frozen:</p>
              <ul>
                {(frozen.active_freezes ?? []).map((f) => (
                  <li key={f.id}>
                    {f.name}, until <time dateTime={f.ends_at}>{when(f.ends_at)}</time>
                  </li>
                ))}
              </ul>
              {frozen.can_override === true ? null : <p>Wait until it ends, or ask an administrator to override it.</p>}
            </>
          )}
          {frozen?.can_override === true ? (
            <form
              class="inline-form"
              onSubmit={(e) => {
                e.preventDefault();
                void run('create', { override_freeze: true, override_reason: override });
              }}
            >
              <label>
                Reason to override the freeze{' '}
                <input required value={override} onInput={(e) => setOverride((e.target as HTMLInputElement).value)} />
              </label>
              <button type="submit">Override the freeze and create</button>
            </form>
          ) : null}
        </div>
      )}
      {preview === undefined ? null : (
        <section aria-labelledby="preview-title" class="preview">
          <h2 id="preview-title">
            Preview: {preview.source_name} {preview.source_version ?? ''}
          </h2>
          <p data-testid="target-summary">
            {count(preview.target_summary.total, 'target')}: {preview.target_summary.online} online,{' '}
            {preview.target_summary.stale} stale, {preview.target_summary.offline} offline
          </p>
          {preview.warnings.length === 0 ? null : (
            <ul class="warnings">
              {preview.warnings.map((w) => (
                <li>{w}</li>
              ))}
            </ul>
          )}
          <ol>
            {preview.plan.steps.map((s) => (
              <li key={s.id}>
                {s.action_name} {s.action_version} on {s.target_name}
              </li>
            ))}
          </ol>
          <button type="button" disabled={busy} onClick={() => void run('create')}>
            Create deployment
          </button>
        </section>
      )}
    </section>
  );
};
