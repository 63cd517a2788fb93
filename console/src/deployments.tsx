// The deployments list: status_counts as tabs, paging, and live updates from GET /sse/deployments. A change updates
// its row at once; the page (and the counts) are read again at most once a second while changes arrive.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, isApiError } from './api.js';
import { duration, stateClass, when } from './format.js';
import { openStream, type StreamState } from './stream.js';
import { ErrorLine, LiveBadge } from './widgets.js';

export interface DeploymentRow {
  readonly id: string;
  readonly short_id?: string;
  readonly action_name: string | null;
  readonly sequence_name: string | null;
  readonly solution_name: string | null;
  readonly state: string;
  readonly progress: number;
  readonly total_steps: number;
  readonly completed_steps: number;
  readonly failed_steps: number;
  readonly triggered_by: string | null;
  readonly created_at: string;
  readonly duration_ms: number | null;
}

interface ListAnswer {
  readonly data: DeploymentRow[];
  readonly meta: { page: number; limit: number; total: number; total_pages?: number };
  readonly status_counts: Record<string, number>;
}

const TABS = ['all', 'running', 'failed', 'succeeded', 'other'] as const;
const LIMIT = 20;

export const nameOf = (d: Pick<DeploymentRow, 'action_name' | 'sequence_name' | 'solution_name' | 'id'>): string =>
  d.solution_name ?? d.sequence_name ?? d.action_name ?? d.id;

export const Deployments = () => {
  const [tab, setTab] = useState<(typeof TABS)[number]>('all');
  const [page, setPage] = useState(1);
  const [answer, setAnswer] = useState<ListAnswer | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [live, setLive] = useState<StreamState>('reconnecting');
  const reload = useRef<() => void>(() => undefined);

  useEffect(() => {
    let cancelled = false;
    const load = async () => {
      try {
        const query = new URLSearchParams({ page: String(page), limit: String(LIMIT) });
        if (tab !== 'all') query.set('status', tab);
        const next = await api<ListAnswer>('GET', `/deployments?${query.toString()}`);
        if (!cancelled) {
          setAnswer(next);
          setError(undefined);
        }
      } catch (e) {
        if (!cancelled) setError(isApiError(e) ? e.message : 'The service cannot be reached.');
      }
    };
    reload.current = () => void load();
    void load();
    return () => {
      cancelled = true;
    };
  }, [tab, page]);

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stream = openStream(
      '/sse/deployments',
      (message) => {
        const record = message.data['record'] as DeploymentRow | undefined;
        if (record === undefined) return;
        setAnswer((current) =>
          current === undefined
            ? current
            : { ...current, data: current.data.map((row) => (row.id === record.id ? record : row)) },
        );
        timer ??= setTimeout(() => {
          timer = undefined;
          reload.current();
        }, 1000);
      },
      { onState: setLive },
    );
    return () => {
      stream.close();
      if (timer !== undefined) clearTimeout(timer);
    };
  }, []);

  const pages = answer === undefined ? 1 : Math.max(1, Math.ceil(answer.meta.total / LIMIT));
  return (
    <section aria-labelledby="deployments-title">
      <header class="page-head">
        <h1 id="deployments-title">Deployments</h1>
        <LiveBadge state={live} />
      </header>
      <div role="tablist" aria-label="Deployment states" class="tabs">
        {TABS.map((name) => (
          <button
            role="tab"
            type="button"
            aria-selected={tab === name}
            onClick={() => {
              setTab(name);
              setPage(1);
            }}
          >
            {name} <span class="count">{answer?.status_counts[name] ?? '…'}</span>
          </button>
        ))}
      </div>
      <ErrorLine message={error} />
      <table class="list">
        <caption class="visually-hidden">Deployments, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Deployment</th>
            <th scope="col">State</th>
            <th scope="col">Steps</th>
            <th scope="col">Started by</th>
            <th scope="col">Created</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {(answer?.data ?? []).map((d) => (
            <tr key={d.id} data-deployment-id={d.id}>
              <td>
                <a href={`#/deployments/${d.id}`}>{nameOf(d)}</a> <span class="muted">{d.short_id}</span>
              </td>
              <td>
                <span class={stateClass(d.state)}>{d.state}</span>
              </td>
              <td>
                {d.completed_steps}/{d.total_steps}
                {d.failed_steps > 0 ? <span class="bad-text"> ({d.failed_steps} failed)</span> : null}
              </td>
              <td>{d.triggered_by ?? '—'}</td>
              <td>{when(d.created_at)}</td>
              <td>{duration(d.duration_ms)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {answer !== undefined && answer.data.length === 0 ? <p class="muted">Nothing here yet.</p> : null}
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
          Newer
        </button>
        <span>
          Page {page} of {pages}
        </span>
        <button type="button" disabled={page >= pages} onClick={() => setPage(page + 1)}>
          Older
        </button>
      </nav>
    </section>
  );
};
