// The admin area, within the caller's permissions: users and roles (read), and the caller's own API keys (list,
// create with scopes the caller holds, revoke; the full key is shown once).
import { useEffect, useState } from 'preact/hooks';
import { api, isApiError, type User } from './api.js';
import { when } from './format.js';
import { ErrorLine } from './widgets.js';

interface AdminUser {
  readonly id: string;
  readonly email: string;
  readonly display_name: string | null;
  readonly status: string;
  readonly roles: string[];
}

interface Role {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly is_system?: boolean;
}

interface ApiKey {
  readonly id: string;
  readonly name: string;
  readonly key_prefix: string;
  readonly scopes: string[];
  readonly last_used_at: string | null;
  readonly expires_at: string | null;
}

const message = (e: unknown) => (isApiError(e) ? e.message : 'The service cannot be reached.');

export const Admin = ({ user, permissions }: { user: User; permissions: ReadonlySet<string> }) => {
  const [users, setUsers] = useState<AdminUser[]>([]);
  const [roles, setRoles] = useState<Role[]>([]);
  const [keys, setKeys] = useState<ApiKey[]>([]);
  const [fullKey, setFullKey] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();

  const loadKeys = () =>
    api<{ api_keys: ApiKey[] }>('GET', '/auth/api-keys').then(
      (answer) => setKeys(answer.api_keys),
      (e: unknown) => setError(message(e)),
    );
  useEffect(() => {
    if (permissions.has('users:read'))
      void api<{ data: AdminUser[] }>('GET', '/admin/users?limit=100').then(
        (answer) => setUsers(answer.data),
        (e: unknown) => setError(message(e)),
      );
    if (permissions.has('roles:read'))
      void api<Role[] | { data: Role[] }>('GET', '/admin/roles').then(
        (answer) => setRoles(Array.isArray(answer) ? answer : answer.data),
        (e: unknown) => setError(message(e)),
      );
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
      {permissions.has('users:read') ? (
        <>
          <h2>Users</h2>
          <table class="list">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Roles</th>
              </tr>
            </thead>
            <tbody>
              {users.map((u) => (
                <tr key={u.id}>
                  <td>{u.email}</td>
                  <td>{u.display_name ?? '—'}</td>
                  <td>{u.status}</td>
                  <td>{u.roles.join(', ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
      {permissions.has('roles:read') ? (
        <>
          <h2>Roles</h2>
          <ul class="plain">
            {roles.map((r) => (
              <li key={r.id}>
                <strong>{r.name}</strong> {r.description ? <span class="muted">{r.description}</span> : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
};
