// Webhook subscriptions (#/webhooks) of the caller's tenant (decisions.md, "Webhooks (issue 18, outbound)"): the list
// and each one's delivery log (tenants:read); a new one (tenants:update: a URL, the event types whose resources the
// caller reads, the format), its secret shown once; edit, enable / disable, a new secret, a test event, redeliver an
// ended delivery, delete (confirmed in the page).
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { SecretOnce } from '../copy-widgets.js';
import { FLEET_ONCE_NOTE } from '../fleet-widgets.js';
import { useList } from '../use-list.js';
import { ErrorLine, NoticeLine, useChanges } from '../widgets.js';
import { Deliveries } from './deliveries.js';
import { IntegrationsNav, SaveOrClose, useOpenRow, WriteButtons } from './parts.js';
import { EventChoices, FormatChoice, webhookFields, type Webhook } from './webhook-fields.js';

type Change = (work: () => Promise<unknown>, done: string) => Promise<boolean>;

const path = (hook: Webhook) => `/webhooks/${encodeURIComponent(hook.id)}`;

/** A webhook's row, with its delivery log or its editor below it when open. */
const WebhookRow = ({
  hook: h,
  permissions,
  rows,
  reloadKey,
  change,
  onTest,
  onSecret,
}: {
  hook: Webhook;
  permissions: ReadonlySet<string>;
  rows: ReturnType<typeof useOpenRow<'log' | 'edit'>>;
  reloadKey: number;
  change: Change;
  onTest: (hook: Webhook) => void;
  onSecret: (url: string, secret: string) => void;
}) => {
  const mayWrite = permissions.has('tenants:update');
  const save = async (event: SubmitEvent) => {
    event.preventDefault();
    const body = webhookFields(new FormData(event.currentTarget as HTMLFormElement));
    if (await change(() => api('PATCH', path(h), body), 'Webhook saved.')) rows.close();
  };
  const rotate = async () => {
    let answer: { secret: string } | undefined;
    const ok = await change(async () => {
      answer = await api<{ secret: string }>('POST', `${path(h)}/rotate-secret`);
    }, 'The webhook has a new secret; the next delivery is signed with it.');
    if (ok && answer !== undefined) onSecret(h.url, answer.secret);
  };
  return (
    <Fragment>
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
          {h.consecutive_failures > 0 ? <div class="muted">{h.consecutive_failures} failed in a row</div> : null}
        </td>
        <td class="row-actions">
          <button
            type="button"
            aria-label={`Deliveries of ${h.url}`}
            aria-expanded={rows.isOpen(h.id, 'log')}
            onClick={() => rows.toggle(h.id, 'log')}
          >
            Deliveries
          </button>
          {mayWrite ? (
            <WriteButtons
              name={h.url}
              enabled={h.enabled}
              editing={rows.isOpen(h.id, 'edit')}
              onEdit={() => rows.toggle(h.id, 'edit')}
              onEnable={() =>
                void change(
                  () => api('PATCH', path(h), { enabled: !h.enabled }),
                  `Webhook ${h.enabled ? 'disabled' : 'enabled'}.`,
                )
              }
              onRotate={() => void rotate()}
              onDelete={() =>
                change(() => api('DELETE', path(h)), 'Webhook deleted; deliveries still waiting are cancelled.')
              }
            >
              <button type="button" aria-label={`Send test to ${h.url}`} onClick={() => onTest(h)}>
                Send test
              </button>
            </WriteButtons>
          ) : null}
        </td>
      </tr>
      {rows.open?.id === h.id ? (
        <tr class="editor">
          <td colSpan={4}>
            {rows.open.mode === 'log' ? (
              <Deliveries hook={h} mayWrite={mayWrite} reloadKey={reloadKey} />
            ) : (
              <form class="stack-form" aria-label={`Edit ${h.url}`} onSubmit={(e) => void save(e)}>
                <label>
                  URL <input name="url" type="url" defaultValue={h.url} required />
                </label>
                <label>
                  Description <input name="description" defaultValue={h.description ?? ''} maxLength={1000} />
                </label>
                <EventChoices permissions={permissions} chosen={h.event_types} />
                <FormatChoice format={h.format} />
                <SaveOrClose onClose={rows.close} />
              </form>
            )}
          </td>
        </tr>
      ) : null}
    </Fragment>
  );
};

const NewWebhookForm = ({
  permissions,
  change,
  onCreated,
}: {
  permissions: ReadonlySet<string>;
  change: Change;
  onCreated: (url: string, secret: string) => void;
}) => {
  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const body = webhookFields(new FormData(formElement));
    let created: (Webhook & { secret: string }) | undefined;
    const ok = await change(async () => {
      created = await api<Webhook & { secret: string }>('POST', '/webhooks', body);
    }, `Webhook to ${body.url} created.`);
    if (ok && created !== undefined) {
      onCreated(created.url, created.secret);
      formElement.reset();
    }
  };
  return (
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
  );
};

export const Webhooks = ({ permissions }: { permissions: ReadonlySet<string> }) => {
  const list = useList<Webhook>('/webhooks');
  const hooks = list.rows ?? [];
  const rows = useOpenRow<'log' | 'edit'>();
  const [reloadKey, setReloadKey] = useState(0);
  const [secret, setSecret] = useState<{ url: string; secret: string } | undefined>();
  const { error, notice, change } = useChanges(list.reload);
  const onSecret = (url: string, value: string) => setSecret({ url, secret: value });

  const test = async (hook: Webhook) => {
    const ok = await change(
      () => api('POST', `${path(hook)}/test`),
      'A test event (ping) is on its way: see the delivery log.',
    );
    if (ok) {
      rows.setOpen({ id: hook.id, mode: 'log' });
      setReloadKey((k) => k + 1);
    }
  };

  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhooks</h1>
      <IntegrationsNav permissions={permissions} current="webhooks" />
      <p class="muted">
        Events of your tenant sent to a URL, signed per Standard Webhooks; retried for about a day; 5 deliveries in a
        row that fail every attempt disable the webhook.
      </p>
      <ErrorLine message={error ?? list.error} />
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
              <WebhookRow
                key={h.id}
                hook={h}
                permissions={permissions}
                rows={rows}
                reloadKey={reloadKey}
                change={change}
                onTest={(hook) => void test(hook)}
                onSecret={onSecret}
              />
            ))}
          </tbody>
        </table>
      </div>
      {hooks.length === 0 ? <p class="muted">No webhooks yet.</p> : null}
      {permissions.has('tenants:update') ? (
        <NewWebhookForm permissions={permissions} change={change} onCreated={onSecret} />
      ) : null}
    </section>
  );
};
