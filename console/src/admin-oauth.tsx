// Administration: OAuth 2.0 clients (apps that act for a user, or for themselves, within the scopes given), within the
// caller's permissions: the list (oauth_clients:read), a new client (oauth_clients:create; scopes only among the
// permissions the caller holds), its secret shown once with Copy, a new secret (oauth_clients:update), deactivate
// (oauth_clients:delete: existing tokens stay valid until they expire). The API decides and its message shows.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorText, type User } from './api.js';
import { when } from './format.js';
import { SecretOnce } from './copy-widgets.js';
import { ConfirmButton, ErrorLine, NoticeLine, useChanges } from './widgets.js';

interface Client {
  readonly id: string;
  readonly client_id: string;
  readonly name: string;
  readonly description: string | null;
  readonly redirect_uris: string[];
  readonly grant_types: string[];
  readonly scopes: string[];
  readonly is_confidential: boolean;
  readonly is_active: boolean;
  readonly created_at: string;
}

const GRANTS = [
  ['authorization_code', 'Authorization code (a user signs in and consents)'],
  ['refresh_token', 'Refresh token'],
  ['client_credentials', 'Client credentials (the app acts for its creator)'],
] as const;

const path = (id: string) => `/admin/oauth-clients/${encodeURIComponent(id)}`;

/** Permission names grouped by resource (`deployments:read` -> deployments), in the order given. */
const byResource = (names: readonly string[]): [string, string[]][] => {
  const groups = new Map<string, string[]>();
  for (const name of names) {
    const resource = name.split(':')[0] ?? name;
    groups.set(resource, [...(groups.get(resource) ?? []), name]);
  }
  return [...groups.entries()];
};

/** The clients: name, client ID, status, grants, scopes, creation, and New secret / Delete as allowed. */
const ClientsTable = ({
  clients,
  mayUpdate,
  mayDelete,
  rotate,
  deactivate,
  edit,
}: {
  clients: readonly Client[];
  mayUpdate: boolean;
  mayDelete: boolean;
  edit: (client: Client) => void;
  rotate: (client: Client) => Promise<unknown>;
  deactivate: (client: Client) => Promise<unknown>;
}) => (
  <div class="table-scroll">
    <table class="list oauth-clients">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Client ID</th>
          <th scope="col">Status</th>
          <th scope="col">Grant types</th>
          <th scope="col">Scopes</th>
          <th scope="col">Created</th>
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {clients.map((c) => (
          <tr key={c.id} data-client-id={c.id}>
            <td>
              {c.name}
              {c.description === null ? null : <div class="muted">{c.description}</div>}
            </td>
            <td>
              <code>{c.client_id}</code>
            </td>
            <td>
              <span class={c.is_active ? 'state ok' : 'state off'}>{c.is_active ? 'active' : 'inactive'}</span>
            </td>
            <td>{c.grant_types.join(', ')}</td>
            <td>{c.scopes.join(', ')}</td>
            <td>{when(c.created_at)}</td>
            <td class="row-actions">
              {mayUpdate && c.is_active ? (
                <button type="button" aria-label={`Edit ${c.name}`} onClick={() => edit(c)}>
                  Edit
                </button>
              ) : null}
              {mayUpdate && c.is_active && c.is_confidential ? (
                <ConfirmButton
                  label="New secret"
                  confirm="Confirm new secret"
                  what={`for ${c.name} (the old one stops working)`}
                  onConfirm={() => rotate(c)}
                />
              ) : null}
              {mayDelete && c.is_active ? (
                <ConfirmButton label="Delete" confirm="Confirm delete" what={c.name} onConfirm={() => deactivate(c)} />
              ) : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
);

/** Name, description, redirect URIs, grants and scopes, filled from `client` when editing one. */
const ClientFields = ({ held, client }: { held: readonly string[]; client?: Client }) => {
  // An edited client's scopes the caller does not hold are shown (checked, not changeable): the API keeps them.
  const names = [...held, ...(client?.scopes ?? []).filter((s) => !held.includes(s))];
  return (
    <>
      <label>
        Name <input name="name" required maxLength={255} defaultValue={client?.name} />
      </label>
      <label>
        Description <input name="description" maxLength={1000} defaultValue={client?.description ?? ''} />
      </label>
      <label>
        Redirect URIs (one per line)
        <textarea name="redirect_uris" rows={2} defaultValue={client?.redirect_uris.join('\n')} />
      </label>
      <fieldset class="choices">
        <legend>Grant types</legend>
        {GRANTS.map(([grant, label]) => (
          <label key={grant}>
            <input
              type="checkbox"
              name="grant_type"
              value={grant}
              defaultChecked={client?.grant_types.includes(grant)}
            />{' '}
            {label}
          </label>
        ))}
      </fieldset>
      {client === undefined ? (
        <label>
          <input type="checkbox" name="is_confidential" defaultChecked /> Confidential (has a secret: a server, not a
          browser or phone app)
        </label>
      ) : null}
      <fieldset class="permission-groups">
        <legend>Scopes (among the permissions you hold)</legend>
        {byResource(names).map(([resource, group]) => (
          <fieldset key={resource} class="choices">
            <legend>{resource}</legend>
            {group.map((name) => (
              <label key={name}>
                <input
                  type="checkbox"
                  name="scope"
                  value={name}
                  defaultChecked={client?.scopes.includes(name)}
                  disabled={!held.includes(name)}
                />{' '}
                {name}
              </label>
            ))}
          </fieldset>
        ))}
      </fieldset>
    </>
  );
};

/** The new-client form. */
const NewClientForm = ({ held, create }: { held: readonly string[]; create: (event: SubmitEvent) => unknown }) => (
  <form class="stack-form" aria-label="New OAuth client" onSubmit={(e) => void create(e)}>
    <fieldset>
      <legend>New OAuth client</legend>
      <ClientFields held={held} />
      <button type="submit">Create client</button>
    </fieldset>
  </form>
);

/** The fields of a client form as the API names them (the confidential flag aside). */
const formSettings = (form: FormData) => {
  const description = String(form.get('description') ?? '').trim();
  return {
    name: String(form.get('name')).trim(),
    description,
    redirect_uris: String(form.get('redirect_uris') ?? '')
      .split(/\s+/)
      .filter((u) => u !== ''),
    grant_types: form.getAll('grant_type').map(String),
    scopes: form.getAll('scope').map(String),
  };
};

const same = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

/** A PATCH body of only what the form changed (an unchanged field is not sent, so it needs no further check). */
const changesOf = (client: Client, form: FormData, held: readonly string[]) => {
  const next = formSettings(form);
  // Scopes the caller does not hold cannot be unticked here (the boxes are disabled): they are kept.
  const scopes = [...next.scopes, ...client.scopes.filter((s) => !held.includes(s))];
  const description = next.description === '' ? null : next.description;
  return {
    ...(next.name === client.name ? {} : { name: next.name }),
    ...(description === client.description ? {} : { description }),
    ...(same(next.redirect_uris, client.redirect_uris) ? {} : { redirect_uris: next.redirect_uris }),
    ...(same(next.grant_types, client.grant_types) ? {} : { grant_types: next.grant_types }),
    ...(same(scopes, client.scopes) ? {} : { scopes }),
  };
};

/** Editing one client, below the table: the fields filled in; Save sends only what changed. */
const EditClientForm = ({
  client,
  held,
  save,
  cancel,
}: {
  client: Client;
  held: readonly string[];
  save: (client: Client, body: Record<string, unknown>) => Promise<boolean>;
  cancel: () => void;
}) => {
  const form = useRef<HTMLFormElement>(null);
  // Keyboard users land on the form they opened (it is below the table)
  useEffect(() => form.current?.querySelector<HTMLInputElement>('input[name="name"]')?.focus(), [client.id]);
  return (
    <form
      ref={form}
      class="stack-form"
      aria-label={`Edit OAuth client ${client.name}`}
      key={client.id}
      onSubmit={(e) => {
        e.preventDefault();
        void save(client, changesOf(client, new FormData(e.currentTarget), held));
      }}
    >
      <fieldset>
        <legend>
          Edit {client.name} (<code>{client.client_id}</code>)
        </legend>
        <ClientFields held={held} client={client} />
        <div class="buttons">
          <button type="submit">Save changes</button>
          <button type="button" onClick={cancel}>
            Cancel
          </button>
        </div>
      </fieldset>
    </form>
  );
};

export const OAuthClients = ({ user, permissions }: { user: User; permissions: ReadonlySet<string> }) => {
  const [clients, setClients] = useState<Client[] | undefined>();
  const [secret, setSecret] = useState<{ name: string; clientId: string; secret: string } | undefined>();
  const [editing, setEditing] = useState<Client | undefined>();
  const mayCreate = permissions.has('oauth_clients:create');
  const mayUpdate = permissions.has('oauth_clients:update');
  const mayDelete = permissions.has('oauth_clients:delete');

  const { error, notice, setError, change } = useChanges(() => load());
  const load = () =>
    api<Client[]>('GET', '/admin/oauth-clients').then(setClients, (e: unknown) => setError(errorText(e)));
  useEffect(() => void load(), []);

  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const { name, description, ...settings } = formSettings(form);
    const body = {
      name,
      ...(description === '' ? {} : { description }),
      ...settings,
      is_confidential: form.get('is_confidential') === 'on',
    };
    let made: (Client & { client_secret: string | null }) | undefined;
    const done = await change(async () => {
      made = await api<Client & { client_secret: string | null }>('POST', '/admin/oauth-clients', body);
    }, `OAuth client ${name} created.`);
    if (done && made !== undefined) {
      formElement.reset();
      if (made.client_secret !== null)
        setSecret({ name: made.name, clientId: made.client_id, secret: made.client_secret });
    }
  };

  const rotate = async (client: Client) => {
    let answer: { client_id: string; client_secret: string } | undefined;
    const done = await change(async () => {
      answer = await api<{ client_id: string; client_secret: string }>('POST', `${path(client.id)}/rotate-secret`);
    }, `${client.name} has a new secret; the old one no longer works.`);
    if (done && answer !== undefined)
      setSecret({ name: client.name, clientId: answer.client_id, secret: answer.client_secret });
  };

  const save = async (client: Client, body: Record<string, unknown>) => {
    if (Object.keys(body).length === 0) {
      setEditing(undefined);
      return true;
    }
    const done = await change(() => api('PATCH', path(client.id), body), `OAuth client ${client.name} saved.`);
    if (done) setEditing(undefined);
    return done;
  };

  const deactivate = (client: Client) =>
    change(
      () => api('DELETE', path(client.id)),
      `${client.name} deactivated: no new sign-ins or tokens; issued tokens stay valid until they expire.`,
    );

  return (
    <section aria-labelledby="oauth-title">
      <h2 id="oauth-title">OAuth clients</h2>
      <p class="muted">
        Applications that use this service through OAuth 2.0 (discovery at /.well-known/oauth-authorization-server).
      </p>
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      {secret === undefined ? null : (
        <SecretOnce
          title="Client secret"
          id="secret-once"
          secret={secret.secret}
          note={
            <>
              <strong>Shown this once.</strong> Copy it now: it cannot be shown again (rotate it for a new one).
            </>
          }
          copyLabel="Copy client secret"
          details={
            <p>
              Client <strong>{secret.name}</strong>, client ID <code>{secret.clientId}</code>.
            </p>
          }
          onDone={() => setSecret(undefined)}
        />
      )}
      {clients === undefined ? (
        <p>Loading…</p>
      ) : clients.length === 0 ? (
        <p>No OAuth clients yet.</p>
      ) : (
        <ClientsTable
          clients={clients}
          mayUpdate={mayUpdate}
          mayDelete={mayDelete}
          rotate={rotate}
          deactivate={deactivate}
          edit={setEditing}
        />
      )}
      {editing === undefined ? null : (
        <EditClientForm client={editing} held={user.permissions} save={save} cancel={() => setEditing(undefined)} />
      )}
      {mayCreate ? <NewClientForm held={user.permissions} create={create} /> : null}
    </section>
  );
};
