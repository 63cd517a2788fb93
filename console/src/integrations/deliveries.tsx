// A webhook's delivery log (7 days), newest first: each delivery's event, state, attempts, response and time, read
// again on Refresh and a moment after a test or a redelivery; Redeliver for an ended one.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api.js';
import { when } from '../format.js';
import { ErrorLine, NoticeLine, useChanges } from '../widgets.js';
import type { Webhook } from './webhook-fields.js';

interface Delivery {
  readonly id: string;
  readonly event_type: string;
  readonly state: 'pending' | 'sending' | 'delivered' | 'failed' | 'cancelled';
  readonly attempt: number;
  readonly status_code: number | null;
  readonly duration_ms: number | null;
  readonly response_excerpt: string | null;
  readonly error: string | null;
  readonly next_attempt_at: string | null;
  readonly created_at: string;
  readonly updated_at: string;
}

const DELIVERY_CLASS: Record<string, string> = {
  delivered: 'state ok',
  failed: 'state bad',
  pending: 'state live',
  sending: 'state live',
  cancelled: 'state off',
};

/** A webhook's delivery log, newest first, read again on Refresh and after a test or a redelivery. */
export const Deliveries = ({ hook, mayWrite, reloadKey }: { hook: Webhook; mayWrite: boolean; reloadKey: number }) => {
  const [deliveries, setDeliveries] = useState<Delivery[] | undefined>();
  const { error, notice, setError, change } = useChanges(() => load());
  const load = () =>
    api<{ data: Delivery[] }>('GET', `/webhooks/${encodeURIComponent(hook.id)}/deliveries?limit=50`).then(
      (answer) => setDeliveries(answer.data),
      (e: unknown) => setError(errorText(e)),
    );
  useEffect(() => {
    void load();
    // A test or a redelivery is queued: its outcome shows a moment later.
    const soon = [1500, 4000].map((ms) => setTimeout(() => void load(), ms));
    return () => soon.forEach(clearTimeout);
  }, [hook.id, reloadKey]);

  return (
    <section aria-label={`Deliveries of ${hook.url}`}>
      <div class="page-head">
        <h3>Delivery log (7 days)</h3>
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      {deliveries === undefined ? (
        <p>Loading…</p>
      ) : deliveries.length === 0 ? (
        <p class="muted">No deliveries yet.</p>
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Deliveries table">
          <table class="list deliveries">
            <caption class="visually-hidden">Deliveries</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Response</th>
                <th scope="col">When</th>
                {mayWrite ? (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {deliveries.map((d) => (
                <tr key={d.id} data-delivery-id={d.id}>
                  <td>{d.event_type}</td>
                  <td>
                    <span class={DELIVERY_CLASS[d.state] ?? 'state'} data-testid="delivery-state">
                      {d.state}
                    </span>
                  </td>
                  <td data-testid="delivery-attempts">{d.attempt}</td>
                  <td>
                    <span data-testid="delivery-code">{d.status_code ?? '—'}</span>
                    {d.duration_ms === null ? null : <span class="muted"> in {d.duration_ms} ms</span>}
                    {d.error === null ? null : <div class="bad-text">{d.error}</div>}
                    {d.response_excerpt === null || d.response_excerpt === '' ? null : (
                      <div class="muted">
                        <code>{d.response_excerpt.slice(0, 200)}</code>
                      </div>
                    )}
                  </td>
                  <td>
                    {when(d.updated_at)}
                    {d.next_attempt_at === null ? null : <div class="muted">next try {when(d.next_attempt_at)}</div>}
                  </td>
                  {mayWrite ? (
                    <td class="row-actions">
                      {['delivered', 'failed', 'cancelled'].includes(d.state) ? (
                        <button
                          type="button"
                          aria-label={`Redeliver ${d.event_type} of ${when(d.created_at)}`}
                          onClick={() =>
                            void change(
                              () =>
                                api(
                                  'POST',
                                  `/webhooks/${encodeURIComponent(hook.id)}/deliveries/${encodeURIComponent(d.id)}/redeliver`,
                                ),
                              `${d.event_type} sent again.`,
                            ).then(() => setTimeout(() => void load(), 1500))
                          }
                        >
                          Redeliver
                        </button>
                      ) : null}
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
};
