// The deployments list: status_counts as tabs, paging, and live updates of the deployments resource list (live.ts:
// the viewer channel, or GET /sse/deployments without one). A change updates its row at once.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, isApiError } from './api.js';
import { duration, stateClass, triggerer, when } from './format.js';
import { watchResources, type LiveState, type ResourceChange } from './live.js';
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
  readonly triggered_by_name?: string;
  readonly created_at: string;
  readonly duration_ms: number | null;
}

interface ListAnswer {
  readonly data: DeploymentRow[];
  readonly meta: { page: number; limit: number; total: number; total_pages?: number };
  readonly status_counts: Record<string, number>;
}

const TABS = ['all', 'running', 'failed', 'succeeded', 'other'] as const;

/** The status_counts bucket of a state, as the API counts them (domain/deployments/queries.ts, STATUS_BUCKETS). */
const bucketOf = (state: string): string =>
  ['pending', 'queued', 'running', 'rolling_back'].includes(state)
    ? 'running'
    : ['failed', 'rolled_back'].includes(state)
      ? 'failed'
      : state === 'success'
        ? 'succeeded'
        : 'other';
const LIMIT = 20;

export const nameOf = (d: Pick<DeploymentRow, 'action_name' | 'sequence_name' | 'solution_name' | 'id'>): string =>
  d.solution_name ?? d.sequence_name ?? d.action_name ?? d.id;

/**
 * Live: the stream's records change the page in place, and the counts move with each state change whose previous
 * state is known (from a listed row or an earlier event). The list is read again only for a change the page cannot
 * place (an older deployment it never listed), at most every 10 s: a list read costs the index partition, a stream
 * event costs nothing more.
 */
const useLiveCounts = ({
  tab,
  page,
  answer,
  setAnswer,
  reload,
  setLive,
}: {
  tab: string;
  page: number;
  answer: ListAnswer | undefined;
  setAnswer: (update: (current: ListAnswer | undefined) => ListAnswer | undefined) => void;
  reload: () => void;
  setLive: (state: LiveState) => void;
}) => {
  const known = useRef(new Map<string, string>());
  const view = useRef({ tab, page });
  view.current = { tab, page };
  useEffect(() => {
    for (const row of answer?.data ?? []) known.current.set(row.id, row.state);
  }, [answer]);

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const apply = ({ event, data }: ResourceChange) => {
      const record = data['record'] as DeploymentRow | undefined;
      if (record === undefined || event === 'deleted') return;
      const before = known.current.get(record.id);
      known.current.set(record.id, record.state);
      if (before === undefined && event !== 'created') {
        timer ??= setTimeout(() => {
          timer = undefined;
          reload();
        }, 10_000);
        return;
      }
      setAnswer((current) => {
        if (current === undefined) return current;
        const counts = { ...current.status_counts };
        const now = bucketOf(record.state);
        if (before === undefined) {
          counts['all'] = (counts['all'] ?? 0) + 1;
          counts[now] = (counts[now] ?? 0) + 1;
        } else if (bucketOf(before) !== now) {
          counts[bucketOf(before)] = (counts[bucketOf(before)] ?? 0) - 1;
          counts[now] = (counts[now] ?? 0) + 1;
        }
        const { tab: shownTab, page: shownPage } = view.current;
        const fresh = before === undefined && shownPage === 1 && (shownTab === 'all' || shownTab === now);
        const rows = fresh
          ? [record, ...current.data].slice(0, LIMIT)
          : current.data.map((row) => (row.id === record.id ? record : row));
        const total = current.meta.total + (fresh ? 1 : 0);
        return { ...current, data: rows, meta: { ...current.meta, total }, status_counts: counts };
      });
    };
    // No snapshot (every deployment the caller may see): after a reconnect or a pause the page is read again.
    const stop = watchResources({
      resourceType: 'deployments',
      snapshot: false,
      onChanges: (changes) => changes.forEach(apply),
      onResume: reload,
      onState: setLive,
    });
    return () => {
      stop();
      if (timer !== undefined) clearTimeout(timer);
    };
  }, []);
};

export const Deployments = () => {
  const [tab, setTab] = useState<(typeof TABS)[number]>('all');
  const [page, setPage] = useState(1);
  const [answer, setAnswer] = useState<ListAnswer | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [live, setLive] = useState<LiveState>('reconnecting');
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

  useLiveCounts({ tab, page, answer, setAnswer, reload: () => reload.current(), setLive });

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
      <table class="list deployments">
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
              <td title={d.triggered_by ?? undefined}>{triggerer(d)}</td>
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
