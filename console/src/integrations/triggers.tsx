// Deploy triggers (#/triggers), the caller's own (decisions.md, "Deploy triggers"): the list (deployments:read), a
// new trigger (deployments:create: what to deploy where, values taken from the call, filters), its secret shown once
// with a signed curl call to copy; enable / disable, edit its name, description, saved request (version, target tags,
// fixed variables: a masked value is kept unless retyped), rules and filters, a new secret,
// delete (confirmed in the page). The API keeps no log of a trigger's calls: its last call's time is shown.
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api.js';
import { SecretOnce } from '../copy-widgets.js';
import { FLEET_ONCE_NOTE, TagChips } from '../fleet-widgets.js';
import { when } from '../format.js';
import { ErrorLine, NoticeLine, useChanges } from '../widgets.js';
import { IntegrationsNav, SaveOrClose, useOpenRow, WriteButtons } from './parts.js';
import { CurlExample } from './signed-call.js';
import {
  editedRequest,
  filtersText,
  NewTriggerForm,
  pairsText,
  RequestFields,
  rulesAndFilters,
  RuleFields,
} from './trigger-form.js';
import { sourceOf, useSources, type Sources, type Trigger } from './trigger-records.js';

type Change = (work: () => Promise<unknown>, done: string) => Promise<boolean>;

const path = (t: Trigger) => `/triggers/${encodeURIComponent(t.id)}`;

const Details = ({ trigger: t }: { trigger: Trigger }) => (
  <>
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
  </>
);

/** A trigger's row, with its details or its editor below it when open. */
const TriggerRow = ({
  trigger: t,
  sources,
  mayWrite,
  rows,
  change,
  onSecret,
}: {
  trigger: Trigger;
  sources: Sources;
  mayWrite: boolean;
  rows: ReturnType<typeof useOpenRow<'details' | 'edit'>>;
  change: Change;
  onSecret: (trigger: Trigger, secret: string) => void;
}) => {
  const save = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const description = String(form.get('description') ?? '').trim();
    const body = {
      name: String(form.get('name') ?? '').trim(),
      description: description === '' ? null : description,
      request: editedRequest(t.request, form),
      ...rulesAndFilters(form),
    };
    if (await change(() => api('PATCH', path(t), body), `Trigger ${body.name} saved.`)) rows.close();
  };
  const rotate = async () => {
    let answer: { secret: string } | undefined;
    const ok = await change(async () => {
      answer = await api<{ secret: string }>('POST', `${path(t)}/rotate-secret`);
    }, `Trigger ${t.name} has a new secret; the old one no longer works.`);
    if (ok && answer !== undefined) onSecret(t, answer.secret);
  };
  return (
    <Fragment>
      <tr data-trigger-id={t.id}>
        <td>
          {t.name}
          {t.description === null ? null : <div class="muted">{t.description}</div>}
        </td>
        <td>
          {sourceOf(t, sources)}
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
            aria-expanded={rows.isOpen(t.id, 'details')}
            onClick={() => rows.toggle(t.id, 'details')}
          >
            Details
          </button>
          {mayWrite ? (
            <WriteButtons
              name={t.name}
              enabled={t.enabled}
              editing={rows.isOpen(t.id, 'edit')}
              onEdit={() => rows.toggle(t.id, 'edit')}
              onEnable={() =>
                void change(
                  () => api('POST', `${path(t)}/${t.enabled ? 'disable' : 'enable'}`),
                  `Trigger ${t.name} ${t.enabled ? 'disabled' : 'enabled'}.`,
                )
              }
              onRotate={() => void rotate()}
              onDelete={() =>
                change(() => api('DELETE', path(t)), `Trigger ${t.name} deleted; its calls are refused from now on.`)
              }
            />
          ) : null}
        </td>
      </tr>
      {rows.isOpen(t.id, 'details') ? (
        <tr class="editor">
          <td colSpan={5}>
            <Details trigger={t} />
          </td>
        </tr>
      ) : null}
      {rows.isOpen(t.id, 'edit') ? (
        <tr class="editor">
          <td colSpan={5}>
            <form class="stack-form" aria-label={`Edit ${t.name}`} onSubmit={(e) => void save(e)}>
              <label>
                Name <input name="name" defaultValue={t.name} required maxLength={255} />
              </label>
              <label>
                Description <input name="description" defaultValue={t.description ?? ''} maxLength={1000} />
              </label>
              <p class="muted">Deploys {sourceOf(t, sources)}.</p>
              <RequestFields request={t.request} />
              <RuleFields rules={t.rules} filters={t.filters} />
              <SaveOrClose onClose={rows.close} />
            </form>
          </td>
        </tr>
      ) : null}
    </Fragment>
  );
};

export const Triggers = ({ permissions }: { permissions: ReadonlySet<string> }) => {
  const [triggers, setTriggers] = useState<Trigger[]>([]);
  const sources = useSources(permissions);
  const rows = useOpenRow<'details' | 'edit'>();
  const [secret, setSecret] = useState<{ trigger: Trigger; secret: string } | undefined>();
  const { error, notice, setError, change } = useChanges(() => load());
  // GET /triggers answers the caller's triggers as a plain list (no envelope, no pages).
  const load = () =>
    api<Trigger[]>('GET', '/triggers').then(
      (answer) => setTriggers(answer),
      (e: unknown) => setError(errorText(e)),
    );
  useEffect(() => {
    void load();
  }, []);
  const onSecret = (trigger: Trigger, value: string) => setSecret({ trigger, secret: value });
  const mayWrite = permissions.has('deployments:create');
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
              <TriggerRow
                key={t.id}
                trigger={t}
                sources={sources}
                mayWrite={mayWrite}
                rows={rows}
                change={change}
                onSecret={onSecret}
              />
            ))}
          </tbody>
        </table>
      </div>
      {triggers.length === 0 ? <p class="muted">No triggers yet.</p> : null}
      {mayWrite ? <NewTriggerForm sources={sources} change={change} onCreated={onSecret} /> : null}
    </section>
  );
};
