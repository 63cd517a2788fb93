// Enrollment tokens on the Targets page: the list (targets:read; what each gives its targets, uses left, expiry,
// who made it), a new token (targets:create: description, tags, registrations allowed, expiry, environment) shown
// once with the one-line install command, and revoke (targets:delete, confirmed in the page).
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { CopyButton, SecretOnce } from './copy-widgets.js';
import { FLEET_ONCE_NOTE, parseTags, plural, TagChips, type Tag } from './fleet-widgets.js';
import { when } from './format.js';
import { useList } from './use-list.js';
import { ConfirmButton, ErrorLine, NoticeLine, useChanges } from './widgets.js';

interface EnrollmentToken {
  readonly id: string;
  readonly description?: string | null;
  readonly tenant_id: string | null;
  readonly environment_id: string | null;
  readonly tags: Tag[];
  readonly uses: number;
  readonly max_uses: number;
  readonly expires_at: string;
  readonly created_by: string;
  readonly created_by_name?: string;
  readonly created_at: string;
}

/** A word as sh reads it back: as it is when plain, else in single quotes. */
const shellWord = (word: string) => (/^[A-Za-z0-9._@:+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);

/** The line that installs the agent on a host and enrolls it with `token` (README, "Install it on a host"). */
export const installCommand = (origin: string, token: string, name: string) =>
  `curl -fsSL ${origin}/agent/install.sh | sudo sh -s -- --server ${origin} --enroll ${token}${
    name === '' ? '' : ` --name ${shellWord(name)}`
  }`;

const EXPIRIES = [
  { hours: 1, label: '1 hour' },
  { hours: 24, label: '24 hours' },
  { hours: 72, label: '3 days' },
  { hours: 168, label: '7 days' },
  { hours: 720, label: '30 days' },
];

/** A new enrollment token (description, tags, registrations allowed, expiry, environment, a host name for the command). */
const NewTokenForm = ({
  environments,
  change,
  onMade,
}: {
  environments: readonly { id: string; name: string }[];
  change: (work: () => Promise<unknown>, done: string) => Promise<boolean>;
  onMade: (made: { token: string; command: string; uses: number }) => void;
}) => {
  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const environment = String(form.get('environment_id') ?? '');
    const description = String(form.get('description') ?? '').trim();
    const body = {
      tags: parseTags(String(form.get('tags') ?? '')),
      max_uses: Number(form.get('max_uses') ?? 1),
      expires_in_hours: Number(form.get('expires_in_hours') ?? 24),
      ...(description === '' ? {} : { description }),
      ...(environment === '' ? {} : { environment_id: environment }),
    };
    let created: { token: string; max_uses: number } | undefined;
    const ok = await change(async () => {
      created = await api<{ token: string; max_uses: number }>('POST', '/targets/enrollment-tokens', body);
    }, 'Enrollment token created.');
    if (ok && created !== undefined) {
      const origin = window.location.origin;
      onMade({
        token: created.token,
        command: installCommand(origin, created.token, String(form.get('name') ?? '').trim()),
        uses: created.max_uses,
      });
      formElement.reset();
    }
  };

  return (
    <form class="stack-form" aria-label="Add a host" onSubmit={(e) => void create(e)}>
      <fieldset>
        <legend>Add a host: a new enrollment token</legend>
        <label>
          Description <input name="description" maxLength={255} placeholder="web fleet, rack 4" />
        </label>
        <label>
          Tags its targets get (key=value, comma-separated)
          <input name="tags" placeholder="role=web, env=prod" />
        </label>
        <label>
          Registrations allowed <input name="max_uses" type="number" min={1} max={1000} defaultValue="1" required />
        </label>
        <label>
          Expires in
          <select name="expires_in_hours">
            {EXPIRIES.map((e) => (
              <option key={e.hours} value={String(e.hours)} selected={e.hours === 24}>
                {e.label}
              </option>
            ))}
          </select>
        </label>
        {environments.length === 0 ? null : (
          <label>
            Environment
            <select name="environment_id">
              <option value="">None</option>
              {environments.map((e) => (
                <option key={e.id} value={e.id}>
                  {e.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          Host name for the command (optional) <input name="name" placeholder="web-3" />
        </label>
        <button type="submit">Create an enrollment token</button>
      </fieldset>
    </form>
  );
};

export const EnrollmentTokens = ({
  permissions,
  environments,
  nameOf,
}: {
  permissions: ReadonlySet<string>;
  environments: readonly { id: string; name: string }[];
  nameOf: (id: string | null | undefined, none?: string) => string;
}) => {
  const list = useList<EnrollmentToken>(permissions.has('targets:read') ? '/targets/enrollment-tokens' : undefined);
  const tokens = list.rows ?? [];
  const [made, setMade] = useState<{ token: string; command: string; uses: number } | undefined>();
  const { error, notice, change } = useChanges(list.reload);

  const now = Date.now();
  const mayDelete = permissions.has('targets:delete');
  return (
    <section aria-labelledby="enrollment-title">
      <h2 id="enrollment-title">Enrollment tokens</h2>
      <p class="muted">
        A host joins with a token: the token decides its tags, tenant and environment (an agent cannot choose them).
      </p>
      <ErrorLine message={error ?? list.error} />
      <NoticeLine message={notice} />
      {permissions.has('targets:create') ? (
        <NewTokenForm environments={environments} change={change} onMade={setMade} />
      ) : null}
      {made === undefined ? null : (
        <SecretOnce
          title="Enrollment token"
          id="enrollment-token"
          secret={made.token}
          note={FLEET_ONCE_NOTE}
          copyLabel="Copy enrollment token"
          focus="heading"
          details={
            <>
              <p>
                Run this on the Linux host, which needs Node.js 22 or later and curl (the token allows{' '}
                {plural(made.uses, 'registration')}). It installs the agent as a systemd service; run it again to
                upgrade, or with --uninstall to remove it.
              </p>
              <pre class="command" id="agent-command" data-testid="agent-command">
                {made.command}
              </pre>
              <CopyButton text={made.command} select="agent-command" label="Copy the install command" />
            </>
          }
          onDone={() => setMade(undefined)}
        />
      )}
      {permissions.has('targets:read') ? (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Enrollment tokens table">
          <table class="list tokens">
            <caption class="visually-hidden">Enrollment tokens</caption>
            <thead>
              <tr>
                <th scope="col">Description</th>
                <th scope="col">Gives</th>
                <th scope="col">Uses left</th>
                <th scope="col">Expires</th>
                <th scope="col">Created by</th>
                {mayDelete ? (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {tokens.map((t) => {
                const expired = Date.parse(t.expires_at) <= now;
                const label = t.description ?? `token of ${when(t.created_at)}`;
                return (
                  <tr key={t.id} data-token-id={t.id}>
                    <td>{t.description ?? <span class="muted">(no description)</span>}</td>
                    <td>
                      <TagChips tags={t.tags} />
                      {t.environment_id === null ? null : (
                        <span class="muted"> environment {nameOf(t.environment_id)}</span>
                      )}
                      {t.tenant_id === null ? null : <span class="muted"> tenant {nameOf(t.tenant_id)}</span>}
                    </td>
                    <td data-testid="uses-left">
                      {t.max_uses - t.uses} of {t.max_uses}
                    </td>
                    <td>
                      {when(t.expires_at)} {expired ? <span class="state off">expired</span> : null}
                    </td>
                    <td>{t.created_by_name ?? t.created_by}</td>
                    {mayDelete ? (
                      <td class="row-actions">
                        <ConfirmButton
                          label="Revoke"
                          what={label}
                          onConfirm={() =>
                            change(
                              () => api('DELETE', `/targets/enrollment-tokens/${encodeURIComponent(t.id)}`),
                              `Token ${label} revoked.`,
                            )
                          }
                        />
                      </td>
                    ) : null}
                  </tr>
                );
              })}
            </tbody>
          </table>
          {tokens.length === 0 ? <p class="muted">No enrollment tokens.</p> : null}
        </div>
      ) : null}
    </section>
  );
};
