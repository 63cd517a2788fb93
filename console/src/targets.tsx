// Targets: online / stale / offline live from GET /sse/targets, their tags and last heartbeat; a target's details
// (agent version and whether it is outdated, tenant and environment by name); for callers who may, rename and edit
// tags (PUT /targets/{id}) and delete (asked to confirm in the page). Enrollment tokens below (enrollment.tsx).
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { EnrollmentTokens } from './enrollment.js';
import { parseTags, TagChips, tagsText, useScopeNames } from './fleet-widgets.js';
import { when } from './format.js';
import { InlineEditForm } from './record-table.js';
import { ConfirmButton, ErrorLine, LiveBadge, NoticeLine, useChanges, useResourceStream } from './widgets.js';

interface Target {
  readonly id: string;
  readonly short_id?: string;
  readonly name: string;
  readonly hostname: string | null;
  readonly os?: string;
  readonly arch?: string;
  readonly status: string;
  readonly tags: { key: string; value: string }[];
  readonly last_heartbeat_at: string | null;
  readonly agent_version: string | null;
  /** Whether the server takes this agent's version (its major); absent from an older server. */
  readonly agent_compatible?: boolean;
  /** Whether the agent is older than the build the server ships (GET /agent/manifest.json); absent from an older server. */
  readonly agent_outdated?: boolean;
  readonly tenant_id?: string | null;
  readonly environment_id?: string | null;
  readonly created_at?: string;
}

const STATUS_CLASS: Record<string, string> = { online: 'state ok', stale: 'state live', offline: 'state bad' };

const AgentVersion = ({ target: t }: { target: Target }) => (
  <>
    {t.agent_version ?? '—'}
    {t.agent_compatible === false ? (
      <>
        {' '}
        <span class="state bad" title="This agent's major version is not the server's: upgrade it">
          incompatible
        </span>
      </>
    ) : t.agent_outdated === true ? (
      <>
        {' '}
        <span
          class="state live"
          title="The server ships a newer agent: run the install line again, or start the agent with --auto-update"
        >
          outdated
        </span>
      </>
    ) : null}
  </>
);

/** What is known of a target and its agent. */
const TargetDetails = ({
  target: t,
  nameOf,
}: {
  target: Target;
  nameOf: (id: string | null | undefined, none?: string) => string;
}) => (
  <dl class="facts" aria-label={`Details of ${t.name}`}>
    <dt>Status</dt>
    <dd>
      <span class={STATUS_CLASS[t.status] ?? 'state'}>{t.status}</span>
    </dd>
    <dt>Last heard from</dt>
    <dd>{when(t.last_heartbeat_at)}</dd>
    <dt>Agent version</dt>
    <dd>
      <AgentVersion target={t} />
      {t.agent_outdated === true ? (
        <span class="muted"> (run the install line again, or use --auto-update)</span>
      ) : null}
    </dd>
    <dt>Host</dt>
    <dd>
      {t.hostname ?? '—'}
      {t.os === undefined ? '' : ` (${t.os}${t.arch === undefined ? '' : `, ${t.arch}`})`}
    </dd>
    <dt>Tags</dt>
    <dd>
      <TagChips tags={t.tags} />
    </dd>
    <dt>Tenant</dt>
    <dd>{nameOf(t.tenant_id, 'none (global)')}</dd>
    <dt>Environment</dt>
    <dd>{nameOf(t.environment_id, 'none')}</dd>
    <dt>Enrolled</dt>
    <dd>{when(t.created_at)}</dd>
    {t.short_id === undefined ? null : (
      <>
        <dt>Short id</dt>
        <dd>
          <code>{t.short_id}</code>
        </dd>
      </>
    )}
  </dl>
);

/** A target's buttons: details, and edit and delete for who may. */
const RowActions = ({
  target: t,
  permissions,
  isOpen,
  toggle,
  change,
}: {
  target: Target;
  permissions: ReadonlySet<string>;
  isOpen: (mode: 'details' | 'edit') => boolean;
  toggle: (mode: 'details' | 'edit') => void;
  change: (work: () => Promise<unknown>, done: string) => Promise<boolean>;
}) => (
  <td class="row-actions">
    <button
      type="button"
      aria-label={`Details of ${t.name}`}
      aria-expanded={isOpen('details')}
      onClick={() => toggle('details')}
    >
      Details
    </button>
    {permissions.has('targets:update') ? (
      <button type="button" aria-label={`Edit ${t.name}`} aria-expanded={isOpen('edit')} onClick={() => toggle('edit')}>
        Edit
      </button>
    ) : null}
    {permissions.has('targets:delete') ? (
      <ConfirmButton
        label="Delete"
        what={t.name}
        onConfirm={() =>
          change(
            () => api('DELETE', `/targets/${encodeURIComponent(t.id)}`),
            `Target ${t.name} deleted; its agent's token no longer works.`,
          )
        }
      />
    ) : null}
  </td>
);

export const Targets = ({ permissions }: { permissions: ReadonlySet<string> }) => {
  const [targets, live] = useResourceStream<Target>('targets');
  const [open, setOpen] = useState<{ id: string; mode: 'details' | 'edit' } | undefined>();
  const { nameOf, environments } = useScopeNames(permissions);
  // The list is live: a change shows through the stream, so there is nothing to read again after one.
  const { error, notice, change } = useChanges(() => Promise.resolve());

  const save = async (event: SubmitEvent, target: Target) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const name = String(form.get('name') ?? '').trim();
    const body = { name, tags: parseTags(String(form.get('tags') ?? '')) };
    const saved = await change(
      () => api('PUT', `/targets/${encodeURIComponent(target.id)}`, body),
      `Target ${name} saved.`,
    );
    if (saved) setOpen(undefined);
  };

  const toggle = (id: string, mode: 'details' | 'edit') =>
    setOpen(open?.id === id && open.mode === mode ? undefined : { id, mode });
  const sorted = [...targets.values()].sort((a, b) => a.name.localeCompare(b.name));
  return (
    <section aria-labelledby="targets-title">
      <header class="page-head">
        <h1 id="targets-title">Targets</h1>
        <LiveBadge state={live} />
      </header>
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      <div class="table-scroll" tabIndex={0} role="region" aria-label="Targets table">
        <table class="list targets">
          <caption class="visually-hidden">Targets and their agents</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Tags</th>
              <th scope="col">Last heard from</th>
              <th scope="col">Agent</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sorted.map((t) => (
              <Fragment key={t.id}>
                <tr data-target-id={t.id}>
                  <td data-testid="target-name">
                    {t.name} <span class="muted">{t.hostname}</span>
                  </td>
                  <td>
                    <span class={STATUS_CLASS[t.status] ?? 'state'}>{t.status}</span>
                  </td>
                  <td data-testid="target-tags">{tagsText(t.tags)}</td>
                  <td>{when(t.last_heartbeat_at)}</td>
                  <td>
                    <AgentVersion target={t} />
                  </td>
                  <RowActions
                    target={t}
                    permissions={permissions}
                    isOpen={(mode) => open?.id === t.id && open.mode === mode}
                    toggle={(mode) => toggle(t.id, mode)}
                    change={change}
                  />
                </tr>
                {open?.id === t.id && open.mode === 'details' ? (
                  <tr class="editor">
                    <td colSpan={6}>
                      <TargetDetails target={t} nameOf={nameOf} />
                    </td>
                  </tr>
                ) : null}
                {open?.id === t.id && open.mode === 'edit' ? (
                  <tr class="editor">
                    <td colSpan={6}>
                      <InlineEditForm
                        label={`Edit ${t.name}`}
                        onSubmit={(e) => void save(e, t)}
                        onClose={() => setOpen(undefined)}
                      >
                        <label>
                          Name <input name="name" defaultValue={t.name} required maxLength={255} />
                        </label>
                        <label>
                          Tags (key=value, comma-separated)
                          <input name="tags" defaultValue={tagsText(t.tags)} placeholder="role=web, env=prod" />
                        </label>
                      </InlineEditForm>
                    </td>
                  </tr>
                ) : null}
              </Fragment>
            ))}
          </tbody>
        </table>
      </div>
      {sorted.length === 0 && live === 'open' ? <p class="muted">No targets yet.</p> : null}
      <EnrollmentTokens permissions={permissions} environments={environments} nameOf={nameOf} />
    </section>
  );
};
