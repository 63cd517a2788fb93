// The queue: pending dispatch requests with their position, priority and why they wait (a freeze names itself;
// otherwise every orchestration instance is busy), live from GET /sse/pending_deployments, each cancellable.
import { useState } from 'preact/hooks';
import { api, isApiError } from './api.js';
import { triggerer } from './format.js';
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
}

const reasonOf = (p: Pending): string =>
  p.status !== 'pending'
    ? (p.error_message ?? p.status)
    : p.waiting_reason !== undefined
      ? `${p.waiting_reason}${p.waiting_until === undefined ? '' : ` (until ${new Date(p.waiting_until).toLocaleString()})`}`
      : 'Waiting for a free orchestration instance';

export const Queue = ({ permissions }: { permissions: ReadonlySet<string> }) => {
  const [rows, live] = useResourceStream<Pending>('pending_deployments');
  const [error, setError] = useState<string | undefined>();

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
      </header>
      <ErrorLine message={error} />
      <table class="list">
        <caption class="visually-hidden">Requests waiting for dispatch, next first</caption>
        <thead>
          <tr>
            <th scope="col">Position</th>
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
              <td>{p.priority}</td>
              <td>{p.queued_at}</td>
              <td title={p.triggered_by}>{triggerer(p)}</td>
              <td class="reason">{reasonOf(p)}</td>
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
                {p.status}
                {p.deployment_id === undefined ? null : (
                  <>
                    {' '}
                    as <a href={`#/deployments/${p.deployment_id}`}>deployment</a>
                  </>
                )}{' '}
                <span class="muted">queued {p.queued_at}</span>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
};
