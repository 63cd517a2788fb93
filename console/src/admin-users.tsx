// Users in the admin area, within the caller's permissions: the list (users:read), a new user (users:create), a
// user's status and roles (users:update), delete (users:delete). Only what the caller may do is offered; the API
// still decides (a user stronger than the caller, the last admin, the caller's own account) and its message shows.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from './api.js';
import { RecordTable, type Column } from './record-table.js';
import { ErrorLine, NoticeLine, useChanges } from './widgets.js';

interface AdminUser {
  readonly id: string;
  readonly email: string;
  readonly username: string;
  readonly display_name: string | null;
  readonly status: string;
  readonly roles: string[];
}

const STATUSES = ['active', 'inactive', 'locked', 'pending'] as const;

/** Role checkboxes when the caller may read the roles, else a comma-separated field. */
const RolePicker = ({ roleNames, selected }: { roleNames: readonly string[] | undefined; selected: string[] }) =>
  roleNames === undefined ? (
    <label>
      Roles (comma-separated) <input name="roles" value={selected.join(', ')} />
    </label>
  ) : (
    <fieldset class="choices inline-choices">
      <legend>Roles</legend>
      {roleNames.map((name) => (
        <label key={name}>
          <input type="checkbox" name="role" value={name} defaultChecked={selected.includes(name)} /> {name}
        </label>
      ))}
    </fieldset>
  );

const rolesOf = (form: FormData): string[] =>
  form.has('roles')
    ? String(form.get('roles'))
        .split(',')
        .map((r) => r.trim())
        .filter((r) => r !== '')
    : form.getAll('role').map(String);

const USER_COLUMNS: Column<AdminUser>[] = [
  { heading: 'Email', cell: (u) => <td>{u.email}</td> },
  { heading: 'Name', cell: (u) => <td>{u.display_name ?? '—'}</td> },
  { heading: 'Status', cell: (u) => <td data-testid="user-status">{u.status}</td> },
  { heading: 'Roles', cell: (u) => <td data-testid="user-roles">{u.roles.join(', ')}</td> },
];

/** The new-user form: email, username, display name, password and roles. */
const NewUserForm = ({
  roleNames,
  create,
}: {
  roleNames: readonly string[] | undefined;
  create: (event: SubmitEvent) => unknown;
}) => (
  <form class="stack-form" aria-label="New user" onSubmit={(e) => void create(e)}>
    <fieldset>
      <legend>New user</legend>
      <label>
        Email <input name="email" type="email" autocomplete="off" required />
      </label>
      <label>
        Username <input name="username" autocomplete="off" required />
      </label>
      <label>
        Display name <input name="display_name" autocomplete="off" />
      </label>
      <label>
        Password <input name="password" type="password" autocomplete="new-password" minLength={8} required />
      </label>
      <RolePicker roleNames={roleNames} selected={[]} />
      <button type="submit">Create user</button>
    </fieldset>
  </form>
);

export const Users = ({
  permissions,
  roleNames,
}: {
  permissions: ReadonlySet<string>;
  roleNames: readonly string[] | undefined;
}) => {
  const [users, setUsers] = useState<AdminUser[]>([]);

  const { error, notice, setError, change } = useChanges(() => load());
  const load = () =>
    api<{ data: AdminUser[] }>('GET', '/admin/users?limit=100').then(
      (answer) => setUsers(answer.data),
      (e: unknown) => setError(errorText(e)),
    );
  useEffect(() => {
    void load();
  }, []);

  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const displayName = String(form.get('display_name') ?? '').trim();
    const body = {
      email: String(form.get('email')),
      username: String(form.get('username')),
      password: String(form.get('password')),
      roles: rolesOf(form),
      ...(displayName === '' ? {} : { display_name: displayName }),
    };
    if (await change(() => api('POST', '/admin/users', body), `User ${body.email} created.`)) formElement.reset();
  };

  const save = (form: FormData, user: AdminUser) => {
    const body = { status: String(form.get('status')), roles: rolesOf(form) };
    return change(() => api('PATCH', `/admin/users/${encodeURIComponent(user.id)}`, body), `User ${user.email} saved.`);
  };

  const remove = (user: AdminUser) =>
    change(() => api('DELETE', `/admin/users/${encodeURIComponent(user.id)}`), `User ${user.email} deleted.`);

  return (
    <section aria-labelledby="users-title">
      <h2 id="users-title">Users</h2>
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      <RecordTable
        records={users}
        kind="user"
        columns={USER_COLUMNS}
        mayUpdate={permissions.has('users:update')}
        mayDelete={permissions.has('users:delete')}
        edit="Edit"
        what={(u) => u.email}
        fields={(u) => (
          <>
            <label>
              Status
              <select name="status">
                {STATUSES.map((s) => (
                  <option key={s} value={s} selected={s === u.status}>
                    {s}
                  </option>
                ))}
              </select>
            </label>
            <RolePicker roleNames={roleNames} selected={u.roles} />
          </>
        )}
        onSave={save}
        onDelete={remove}
      />
      {permissions.has('users:create') ? <NewUserForm roleNames={roleNames} create={create} /> : null}
    </section>
  );
};
