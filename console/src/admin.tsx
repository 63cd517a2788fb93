// The admin area, within the caller's permissions: the caller's own API keys (list, create with scopes the caller
// holds, revoke; the full key is shown once), users (admin-users.tsx) and roles (admin-roles.tsx).
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, type User } from './api.js';
import { Roles } from './admin-roles.js';
import { Users } from './admin-users.js';
import { when } from './format.js';
import { ErrorLine } from './widgets.js';

interface ApiKey {
  readonly id: string;
  readonly name: string;
  readonly key_prefix: string;
  readonly scopes: string[];
  readonly last_used_at: string | null;
  readonly expires_at: string | null;
}

const message = errorText;

export const Admin = ({ user, permissions }: { user: User; permissions: ReadonlySet<string> }) => {
  const [roleNames, setRoleNames] = useState<string[] | undefined>();
  const [keys, setKeys] = useState<ApiKey[]>([]);
  const [fullKey, setFullKey] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();

  const loadKeys = () =>
    api<{ api_keys: ApiKey[] }>('GET', '/auth/api-keys').then(
      (answer) => setKeys(answer.api_keys),
      (e: unknown) => setError(message(e)),
    );
  useEffect(() => {
    if (permissions.has('api_keys:read')) void loadKeys();
  }, []);

  const createKey = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    try {
      const created = await api<{ full_key: string }>('POST', '/auth/api-keys', {
        name: String(form.get('name')),
        scopes: form.getAll('scope').map(String),
      });
      setFullKey(created.full_key);
      await loadKeys();
    } catch (e) {
      setError(message(e));
    }
  };
  const revoke = async (id: string) => {
    try {
      await api('DELETE', `/auth/api-keys/${encodeURIComponent(id)}`);
      await loadKeys();
    } catch (e) {
      setError(message(e));
    }
  };

  return (
    <section aria-labelledby="admin-title">
      <h1 id="admin-title">Administration</h1>
      <AdminLinks permissions={permissions} />
      <ErrorLine message={error} />
      {permissions.has('api_keys:read') ? (
        <>
          <h2>Your API keys</h2>
          <table class="list">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Scopes</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <tr key={k.id} data-key-id={k.id}>
                  <td>{k.name}</td>
                  <td>
                    <code>{k.key_prefix}…</code>
                  </td>
                  <td>{k.scopes.join(', ')}</td>
                  <td>{when(k.last_used_at)}</td>
                  <td>
                    {permissions.has('api_keys:delete') ? (
                      <button type="button" onClick={() => void revoke(k.id)}>
                        Revoke
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {permissions.has('api_keys:create') ? (
            <form class="stack-form" onSubmit={(e) => void createKey(e)}>
              <fieldset>
                <legend>New API key</legend>
                <label>
                  Name <input name="name" required />
                </label>
                <div class="choices" role="group" aria-label="Scopes">
                  {user.permissions.map((p) => (
                    <label>
                      <input type="checkbox" name="scope" value={p} /> {p}
                    </label>
                  ))}
                </div>
                <button type="submit">Create key</button>
              </fieldset>
            </form>
          ) : null}
          {fullKey === undefined ? null : (
            <>
              <p>The key, shown this once:</p>
              <pre class="command" data-testid="full-key">
                {fullKey}
              </pre>
            </>
          )}
        </>
      ) : null}
      {permissions.has('users:read') ? <Users permissions={permissions} roleNames={roleNames} /> : null}
      {permissions.has('roles:read') ? <Roles permissions={permissions} onRoles={setRoleNames} /> : null}
    </section>
  );
};

/** The sections with a page of their own (identity providers, OAuth clients), each within its read permission. */
const AdminLinks = ({ permissions }: { permissions: ReadonlySet<string> }) => {
  const links = [
    ['#/admin/identity-providers', 'Identity providers', 'identity_providers:read'],
    ['#/admin/oauth-clients', 'OAuth clients', 'oauth_clients:read'],
  ].filter(([, , permission]) => permissions.has(permission!));
  return links.length === 0 ? null : (
    <nav aria-label="Administration sections">
      <ul class="plain buttons">
        {links.map(([href, label]) => (
          <li key={href}>
            <a href={href}>{label}</a>
          </li>
        ))}
      </ul>
    </nav>
  );
};
