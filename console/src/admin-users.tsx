// Users in the admin area, within the caller's permissions: the list (users:read), a new user (users:create), a
// user's status and roles (users:update), delete (users:delete). Only what the caller may do is offered; the API
// still decides (a user stronger than the caller, the last admin, the caller's own account) and its message shows.
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from './api.js';
import { ConfirmButton, ErrorLine, NoticeLine, useChanges } from './widgets.js';

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

/** The editor row under a user: status and roles, Save and Close. */
const UserEditor = ({
  u,
  roleNames,
  save,
  close,
}: {
  u: AdminUser;
  roleNames: readonly string[] | undefined;
  save: (event: SubmitEvent, user: AdminUser) => unknown;
  close: () => void;
}) => (
  <tr class="editor">
    <td colSpan={5}>
      <form class="inline-form" aria-label={`Edit ${u.email}`} onSubmit={(e) => void save(e, u)}>
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
        <button type="submit">Save</button>
        <button type="button" onClick={close}>
          Close
        </button>
      </form>
    </td>
  </tr>
);

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
  const [editing, setEditing] = useState<string | undefined>();

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

  const save = async (event: SubmitEvent, user: AdminUser) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const body = { status: String(form.get('status')), roles: rolesOf(form) };
    const saved = await change(
      () => api('PATCH', `/admin/users/${encodeURIComponent(user.id)}`, body),
      `User ${user.email} saved.`,
    );
    if (saved) setEditing(undefined);
  };

  const remove = (user: AdminUser) =>
    change(() => api('DELETE', `/admin/users/${encodeURIComponent(user.id)}`), `User ${user.email} deleted.`);

  const mayUpdate = permissions.has('users:update');
  const mayDelete = permissions.has('users:delete');
  return (
    <section aria-labelledby="users-title">
      <h2 id="users-title">Users</h2>
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      <div class="table-scroll">
        <table class="list users">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Roles</th>
              {mayUpdate || mayDelete ? (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <Fragment key={u.id}>
                <tr data-user-id={u.id}>
                  <td>{u.email}</td>
                  <td>{u.display_name ?? '—'}</td>
                  <td data-testid="user-status">{u.status}</td>
                  <td data-testid="user-roles">{u.roles.join(', ')}</td>
                  {mayUpdate || mayDelete ? (
                    <td class="row-actions">
                      {mayUpdate ? (
                        <button
                          type="button"
                          aria-label={`Edit ${u.email}`}
                          aria-expanded={editing === u.id}
                          onClick={() => setEditing(editing === u.id ? undefined : u.id)}
                        >
                          Edit
                        </button>
                      ) : null}
                      {mayDelete ? <ConfirmButton label="Delete" what={u.email} onConfirm={() => remove(u)} /> : null}
                    </td>
                  ) : null}
                </tr>
                {editing === u.id ? (
                  <UserEditor u={u} roleNames={roleNames} save={save} close={() => setEditing(undefined)} />
                ) : null}
              </Fragment>
            ))}
          </tbody>
        </table>
      </div>
      {permissions.has('users:create') ? <NewUserForm roleNames={roleNames} create={create} /> : null}
    </section>
  );
};
