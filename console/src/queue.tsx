// The queue: pending dispatch requests with what they deploy, their position, priority and why they wait (a freeze
// names itself; otherwise the orchestration capacity says: 0, or every instance busy), live from
// GET /sse/pending_deployments, each cancellable.
import { useEffect, useState } from 'preact/hooks';
import { api, isApiError } from './api.js';
import { triggerer, when } from './format.js';
import { ErrorLine, LiveBadge, useResourceStream } from './widgets.js';

interface Pending {
  readonly id: string;
  readonly status: string;
  readonly priority: number;
  readonly queue_position?: number;
  readonly queued_at: string;
  readonly triggered_by?: string;
  readonly triggered_by_name?: string;
  readonly waiting_reason?: string;
  readonly waiting_until?: string;
  readonly deployment_id?: string;
  readonly error_message?: string;
  readonly source_type?: string;
  readonly source_name?: string;
  readonly source_version?: string;
  readonly target_count?: number;
}

/** GET /admin/orchestration: how many instances there are and how many are in use. */
interface Orchestration {
  readonly instances: number;
  readonly in_use: number;
}

/** The API's pending times are UTC without a zone (`YYYY-MM-DD HH:MM:SS`): shown in the reader's time. */
const pendingWhen = (text: string): string => when(`${text.replace(' ', 'T')}Z`);

const whatOf = (p: Pending): string =>
  p.source_name === undefined
    ? '—'
    : `${p.source_name}${p.source_version === undefined ? '' : ` ${p.source_version}`}${
        p.target_count === undefined ? '' : ` on ${p.target_count} target${p.target_count === 1 ? '' : 's'}`
      }`;

const reasonOf = (p: Pending, orchestration: Orchestration | undefined): string =>
  p.status !== 'pending'
    ? (p.error_message ?? p.status)
    : p.waiting_reason !== undefined
      ? `${p.waiting_reason}${p.waiting_until === undefined ? '' : ` (until ${when(p.waiting_until)})`}`
      : orchestration?.instances === 0
        ? 'The orchestration capacity is 0: nothing starts until an administrator raises it'
        : orchestration !== undefined && orchestration.in_use >= orchestration.instances
          ? `Every orchestration instance is busy (${orchestration.in_use} of ${orchestration.instances})`
          : 'Waiting for a free orchestration instance';

export const Queue = ({ permissions }: { permissions: ReadonlySet<string> }) => {
  const [rows, live] = useResourceStream<Pending>('pending_deployments');
  const [error, setError] = useState<string | undefined>();
  const [orchestration, setOrchestration] = useState<Orchestration | undefined>();
  // The capacity behind "why it waits", read again whenever the queue changes.
  useEffect(() => {
    let stale = false;
    api<Orchestration>('GET', '/admin/orchestration').then(
      (o) => !stale && setOrchestration(o),
      () => undefined,
    );
    return () => {
      stale = true;
    };
  }, [rows]);

  const cancel = async (id: string) => {
    try {
      await api('DELETE', `/deployments/pending/${encodeURIComponent(id)}`);
    } catch (e) {
      setError(isApiError(e) ? e.message : 'The cancel did not reach the service.');
    }
  };

  const waiting = [...rows.values()]
    .filter((p) => p.status === 'pending' || p.status === 'processing')
    .sort((a, b) => (a.queue_position ?? 1e9) - (b.queue_position ?? 1e9));
  const done = [...rows.values()]
    .filter((p) => !waiting.includes(p))
    .slice(-20)
    .reverse();
  return (
    <section aria-labelledby="queue-title">
      <header class="page-head">
        <h1 id="queue-title">Queue</h1>
        <LiveBadge state={live} />
        <a href="#/capacity">Capacity</a>
      </header>
      <ErrorLine message={error} />
      <table class="list">
        <caption class="visually-hidden">Requests waiting for dispatch, next first</caption>
        <thead>
          <tr>
            <th scope="col">Position</th>
            <th scope="col">What</th>
            <th scope="col">Priority</th>
            <th scope="col">Queued</th>
            <th scope="col">By</th>
            <th scope="col">Why it waits</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {waiting.map((p) => (
            <tr key={p.id} data-pending-id={p.id}>
              <td>{p.queue_position ?? '—'}</td>
              <td>{whatOf(p)}</td>
              <td>{p.priority}</td>
              <td>{pendingWhen(p.queued_at)}</td>
              <td title={p.triggered_by}>{triggerer(p)}</td>
              <td class="reason">{reasonOf(p, orchestration)}</td>
              <td>
                {permissions.has('pending_deployments:cancel') && p.status === 'pending' ? (
                  <button type="button" onClick={() => void cancel(p.id)}>
                    Cancel
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {waiting.length === 0 ? <p class="muted">Nothing waits.</p> : null}
      {done.length === 0 ? null : (
        <>
          <h2>Recently left the queue</h2>
          <ul class="plain">
            {done.map((p) => (
              <li key={p.id} data-pending-id={p.id} data-status={p.status}>
                {whatOf(p)}: {p.status}
                {p.deployment_id === undefined ? null : (
                  <>
                    {' '}
                    as <a href={`#/deployments/${p.deployment_id}`}>{p.source_name ?? 'deployment'}</a>
                  </>
                )}{' '}
                <span class="muted">
                  queued {pendingWhen(p.queued_at)} by {triggerer(p)}
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
};
