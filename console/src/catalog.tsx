// The catalog, read only: actions (with their versions, scripts and variables), sequences and solutions.
import { useEffect, useState } from 'preact/hooks';
import { api, isApiError } from './api.js';
import { when } from './format.js';
import { ErrorLine } from './widgets.js';

interface Named {
  readonly id: string;
  readonly short_id?: string;
  readonly name: string;
  readonly description: string | null;
  readonly updated_at?: string;
}

interface Action extends Named {
  readonly slug: string;
  readonly latest_version: string | null;
}

interface Version {
  readonly id: string;
  readonly version: string;
  readonly script: string;
  readonly interpreter: string | null;
  readonly rollback_script: string | null;
  readonly variables: {
    name: string;
    description: string | null;
    required: boolean;
    default: string | null;
    secret: boolean;
  }[];
  readonly changelog: string | null;
  readonly created_at: string;
}

interface Sequence extends Named {
  readonly version: string;
  readonly steps: { order: number; action_id: string; version_requirement: string | null }[];
}

interface Solution extends Named {
  readonly version: string;
  readonly sequences: { order: number; sequence_id: string }[];
}

/** A list endpoint's first 100 records; nothing is asked when `path` is undefined (the caller may not read it). */
const useList = <T,>(path: string | undefined): [T[] | undefined, string | undefined] => {
  const [rows, setRows] = useState<T[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    if (path === undefined) return;
    api<{ data: T[] }>('GET', `${path}?limit=100`).then(
      (answer) => setRows(answer.data),
      (e: unknown) => setError(isApiError(e) ? e.message : 'The service cannot be reached.'),
    );
  }, [path]);
  return [rows, error];
};

const ActionVersions = ({ id }: { id: string }) => {
  const [versions, setVersions] = useState<Version[] | undefined>();
  useEffect(() => {
    api<{ versions: Version[] }>('GET', `/actions/${encodeURIComponent(id)}`).then(
      (detail) => setVersions(detail.versions),
      () => setVersions([]),
    );
  }, [id]);
  if (versions === undefined) return <p>Loading…</p>;
  return (
    <>
      {versions.map((v) => (
        <section class="version" key={v.id} aria-label={`Version ${v.version}`}>
          <h4>
            {v.version} <span class="muted">{when(v.created_at)}</span>
          </h4>
          {v.changelog ? <p>{v.changelog}</p> : null}
          <pre class="command">{v.script}</pre>
          {v.rollback_script ? (
            <>
              <p>Rollback:</p>
              <pre class="command">{v.rollback_script}</pre>
            </>
          ) : null}
          {v.variables.length === 0 ? null : (
            <ul>
              {v.variables.map((variable) => (
                <li>
                  <code>{variable.name}</code>
                  {variable.required ? ' (required)' : ''}
                  {variable.secret ? ' (secret)' : ''}
                  {variable.default !== null && !variable.secret ? ` default ${variable.default}` : ''}
                  {variable.description ? ` — ${variable.description}` : ''}
                </li>
              ))}
            </ul>
          )}
        </section>
      ))}
    </>
  );
};

export const Catalog = ({ permissions }: { permissions: ReadonlySet<string> }) => {
  const [actions, actionsError] = useList<Action>('/actions');
  const [sequences] = useList<Sequence>(permissions.has('sequences:read') ? '/sequences' : undefined);
  const [solutions] = useList<Solution>(permissions.has('solutions:read') ? '/solutions' : undefined);
  const [open, setOpen] = useState<string | undefined>();
  const actionName = (id: string) => actions?.find((a) => a.id === id)?.name ?? id;
  const sequenceName = (id: string) => sequences?.find((s) => s.id === id)?.name ?? id;
  return (
    <section aria-labelledby="catalog-title">
      <h1 id="catalog-title">Catalog</h1>
      <ErrorLine message={actionsError} />
      <h2>Actions</h2>
      <ul class="plain catalog">
        {(actions ?? []).map((a) => (
          <li key={a.id} data-action-id={a.id}>
            <button
              type="button"
              aria-expanded={open === a.id}
              onClick={() => setOpen(open === a.id ? undefined : a.id)}
            >
              {a.name}
            </button>{' '}
            <span class="muted">
              {a.slug} · latest {a.latest_version ?? '—'}
            </span>
            {a.description ? <p>{a.description}</p> : null}
            {open === a.id ? <ActionVersions id={a.id} /> : null}
          </li>
        ))}
      </ul>
      {permissions.has('sequences:read') ? (
        <>
          <h2>Sequences</h2>
          <ul class="plain catalog">
            {(sequences ?? []).map((s) => (
              <li key={s.id}>
                <strong>{s.name}</strong> <span class="muted">{s.version}</span>:{' '}
                {[...s.steps]
                  .sort((x, y) => x.order - y.order)
                  .map(
                    (step) =>
                      `${actionName(step.action_id)}${step.version_requirement ? ` ${step.version_requirement}` : ''}`,
                  )
                  .join(' → ')}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {permissions.has('solutions:read') ? (
        <>
          <h2>Solutions</h2>
          <ul class="plain catalog">
            {(solutions ?? []).map((s) => (
              <li key={s.id}>
                <strong>{s.name}</strong> <span class="muted">{s.version}</span>:{' '}
                {[...s.sequences]
                  .sort((x, y) => x.order - y.order)
                  .map((q) => sequenceName(q.sequence_id))
                  .join(' → ')}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
};
