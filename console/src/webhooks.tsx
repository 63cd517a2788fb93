// Webhook subscriptions (#/webhooks) of the caller's tenant (decisions.md, "Webhooks (issue 18, outbound)"): the list
// and each one's delivery log (tenants:read); a new one (tenants:update: a URL, the event types whose resources the
// caller reads, the format), its secret shown once; edit, enable / disable, a new secret, a test event, redeliver an
// ended delivery, delete (confirmed in the page).
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from './api.js';
import { SecretOnce } from './copy-widgets.js';
import { FLEET_ONCE_NOTE } from './fleet-widgets.js';
import { when } from './format.js';
import { ConfirmButton, ErrorLine, NoticeLine, useChanges } from './widgets.js';

/** Each event type one may subscribe to, and the read permission it needs (domain/webhooks/events.ts). */
const EVENT_TYPES: readonly (readonly [string, string])[] = [
  ['deployment.created', 'deployments:read'],
  ['deployment.started', 'deployments:read'],
  ['deployment.succeeded', 'deployments:read'],
  ['deployment.failed', 'deployments:read'],
  ['deployment.cancelled', 'deployments:read'],
  ['deployment.rolled_back', 'deployments:read'],
  ['pending_request.queued', 'pending_deployments:read'],
  ['pending_request.dispatched', 'pending_deployments:read'],
  ['target.online', 'targets:read'],
  ['target.offline', 'targets:read'],
  ['analysis.completed', 'analysis:read'],
];

interface Webhook {
  readonly id: string;
  readonly url: string;
  readonly description: string | null;
  readonly event_types: string[];
  readonly format: 'standard' | 'slack';
  readonly enabled: boolean;
  readonly disabled_reason: string | null;
  readonly consecutive_failures: number;
  readonly created_at: string;
}

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

/** The two integration pages, each shown with the permission that reads it. */
export const IntegrationsNav = ({
  permissions,
  current,
}: {
  permissions: ReadonlySet<string>;
  current: 'triggers' | 'webhooks';
}) => (
  <nav class="subnav" aria-label="Integrations">
    {permissions.has('deployments:read') ? (
      <a href="#/triggers" aria-current={current === 'triggers' ? 'page' : undefined}>
        Deploy triggers
      </a>
    ) : null}
    {permissions.has('tenants:read') ? (
      <a href="#/webhooks" aria-current={current === 'webhooks' ? 'page' : undefined}>
        Webhooks
      </a>
    ) : null}
  </nav>
);

/** The event types the caller may subscribe to, as checkboxes. */
const EventChoices = ({ permissions, chosen }: { permissions: ReadonlySet<string>; chosen: readonly string[] }) => (
  <fieldset class="choices inline-choices">
    <legend>Events</legend>
    {EVENT_TYPES.filter(([, p]) => permissions.has(p)).map(([type]) => (
      <label key={type}>
        <input type="checkbox" name="event_type" value={type} defaultChecked={chosen.includes(type)} /> {type}
      </label>
    ))}
  </fieldset>
);

const FormatChoice = ({ format }: { format: string }) => (
  <label>
    Format
    <select name="format">
      <option value="standard" selected={format === 'standard'}>
        Standard Webhooks (JSON)
      </option>
      <option value="slack" selected={format === 'slack'}>
        Slack incoming webhook
      </option>
    </select>
  </label>
);

/** A webhook's delivery log, newest first, read again on Refresh and after a test or a redelivery. */
const Deliveries = ({ hook, mayWrite, reloadKey }: { hook: Webhook; mayWrite: boolean; reloadKey: number }) => {
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

export const Webhooks = ({ permissions }: { permissions: ReadonlySet<string> }) => {
  const [hooks, setHooks] = useState<Webhook[]>([]);
  const [open, setOpen] = useState<{ id: string; mode: 'log' | 'edit' } | undefined>();
  const [reloadKey, setReloadKey] = useState(0);
  const [secret, setSecret] = useState<{ url: string; secret: string } | undefined>();
  const { error, notice, setError, change } = useChanges(() => load());
  const load = () =>
    api<{ data: Webhook[] }>('GET', '/webhooks?limit=100').then(
      (answer) => setHooks(answer.data),
      (e: unknown) => setError(errorText(e)),
    );
  useEffect(() => {
    void load();
  }, []);

  const fields = (form: FormData) => {
    const description = String(form.get('description') ?? '').trim();
    return {
      url: String(form.get('url') ?? '').trim(),
      description: description === '' ? null : description,
      event_types: form.getAll('event_type').map(String),
      format: String(form.get('format') ?? 'standard'),
    };
  };

  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const body = fields(new FormData(formElement));
    let created: (Webhook & { secret: string }) | undefined;
    const ok = await change(async () => {
      created = await api<Webhook & { secret: string }>('POST', '/webhooks', body);
    }, `Webhook to ${body.url} created.`);
    if (ok && created !== undefined) {
      setSecret({ url: created.url, secret: created.secret });
      formElement.reset();
    }
  };

  const save = async (event: SubmitEvent, hook: Webhook) => {
    event.preventDefault();
    const body = fields(new FormData(event.currentTarget as HTMLFormElement));
    const ok = await change(() => api('PATCH', `/webhooks/${encodeURIComponent(hook.id)}`, body), 'Webhook saved.');
    if (ok) setOpen(undefined);
  };

  const rotate = async (hook: Webhook) => {
    let answer: { secret: string } | undefined;
    const ok = await change(async () => {
      answer = await api<{ secret: string }>('POST', `/webhooks/${encodeURIComponent(hook.id)}/rotate-secret`);
    }, 'The webhook has a new secret; the next delivery is signed with it.');
    if (ok && answer !== undefined) setSecret({ url: hook.url, secret: answer.secret });
  };

  const test = async (hook: Webhook) => {
    const ok = await change(
      () => api('POST', `/webhooks/${encodeURIComponent(hook.id)}/test`),
      'A test event (ping) is on its way: see the delivery log.',
    );
    if (ok) {
      setOpen({ id: hook.id, mode: 'log' });
      setReloadKey((k) => k + 1);
    }
  };

  const mayWrite = permissions.has('tenants:update');
  const toggle = (id: string, mode: 'log' | 'edit') =>
    setOpen(open?.id === id && open.mode === mode ? undefined : { id, mode });
  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhooks</h1>
      <IntegrationsNav permissions={permissions} current="webhooks" />
      <p class="muted">
        Events of your tenant sent to a URL, signed per Standard Webhooks; retried for about a day; 5 deliveries in a
        row that fail every attempt disable the webhook.
      </p>
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      {secret === undefined ? null : (
        <SecretOnce
          title={`Signing secret of the webhook to ${secret.url}`}
          id="webhook-secret"
          secret={secret.secret}
          note={FLEET_ONCE_NOTE}
          copyLabel={`Copy signing secret of the webhook to ${secret.url.toLowerCase()}`}
          focus="heading"
          details={<p>Give it to the receiver: it verifies each call's webhook-signature with it.</p>}
          onDone={() => setSecret(undefined)}
        />
      )}
      <div class="table-scroll" tabIndex={0} role="region" aria-label="Webhooks table">
        <table class="list webhooks">
          <caption class="visually-hidden">Webhooks</caption>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Events</th>
              <th scope="col">State</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {hooks.map((h) => (
              <Fragment key={h.id}>
                <tr data-webhook-id={h.id}>
                  <td>
                    <code class="url">{h.url}</code>
                    {h.description === null ? null : <div class="muted">{h.description}</div>}
                  </td>
                  <td>
                    {h.event_types.join(', ')}
                    {h.format === 'slack' ? <div class="muted">Slack format</div> : null}
                  </td>
                  <td>
                    <span data-testid="webhook-state" class={h.enabled ? 'state ok' : 'state off'}>
                      {h.enabled ? 'enabled' : 'disabled'}
                    </span>
                    {h.disabled_reason === null ? null : <div class="bad-text">{h.disabled_reason}</div>}
                    {h.consecutive_failures > 0 ? (
                      <div class="muted">{h.consecutive_failures} failed in a row</div>
                    ) : null}
                  </td>
                  <td class="row-actions">
                    <button
                      type="button"
                      aria-label={`Deliveries of ${h.url}`}
                      aria-expanded={open?.id === h.id && open.mode === 'log'}
                      onClick={() => toggle(h.id, 'log')}
                    >
                      Deliveries
                    </button>
                    {mayWrite ? (
                      <>
                        <button type="button" aria-label={`Send test to ${h.url}`} onClick={() => void test(h)}>
                          Send test
                        </button>
                        <button
                          type="button"
                          aria-label={`Edit ${h.url}`}
                          aria-expanded={open?.id === h.id && open.mode === 'edit'}
                          onClick={() => toggle(h.id, 'edit')}
                        >
                          Edit
                        </button>
                        <button
                          type="button"
                          aria-label={`${h.enabled ? 'Disable' : 'Enable'} ${h.url}`}
                          onClick={() =>
                            void change(
                              () => api('PATCH', `/webhooks/${encodeURIComponent(h.id)}`, { enabled: !h.enabled }),
                              `Webhook ${h.enabled ? 'disabled' : 'enabled'}.`,
                            )
                          }
                        >
                          {h.enabled ? 'Disable' : 'Enable'}
                        </button>
                        <button type="button" aria-label={`New secret for ${h.url}`} onClick={() => void rotate(h)}>
                          New secret
                        </button>
                        <ConfirmButton
                          label="Delete"
                          what={h.url}
                          onConfirm={() =>
                            change(
                              () => api('DELETE', `/webhooks/${encodeURIComponent(h.id)}`),
                              'Webhook deleted; deliveries still waiting are cancelled.',
                            )
                          }
                        />
                      </>
                    ) : null}
                  </td>
                </tr>
                {open?.id === h.id ? (
                  <tr class="editor">
                    <td colSpan={4}>
                      {open.mode === 'log' ? (
                        <Deliveries hook={h} mayWrite={mayWrite} reloadKey={reloadKey} />
                      ) : (
                        <form class="stack-form" aria-label={`Edit ${h.url}`} onSubmit={(e) => void save(e, h)}>
                          <label>
                            URL <input name="url" type="url" defaultValue={h.url} required />
                          </label>
                          <label>
                            Description <input name="description" defaultValue={h.description ?? ''} maxLength={1000} />
                          </label>
                          <EventChoices permissions={permissions} chosen={h.event_types} />
                          <FormatChoice format={h.format} />
                          <div class="buttons">
                            <button type="submit">Save</button>
                            <button type="button" onClick={() => setOpen(undefined)}>
                              Close
                            </button>
                          </div>
                        </form>
                      )}
                    </td>
                  </tr>
                ) : null}
              </Fragment>
            ))}
          </tbody>
        </table>
      </div>
      {hooks.length === 0 ? <p class="muted">No webhooks yet.</p> : null}
      {mayWrite ? (
        <form class="stack-form" aria-label="New webhook" onSubmit={(e) => void create(e)}>
          <fieldset>
            <legend>New webhook</legend>
            <label>
              URL (https) <input name="url" type="url" required placeholder="https://ci.example.com/deployer-hook" />
            </label>
            <label>
              Description <input name="description" maxLength={1000} />
            </label>
            <EventChoices permissions={permissions} chosen={['deployment.succeeded', 'deployment.failed']} />
            <FormatChoice format="standard" />
            <button type="submit">Create webhook</button>
          </fieldset>
        </form>
      ) : null}
    </section>
  );
};
