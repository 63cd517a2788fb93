// Roles in the admin area, within the caller's permissions: the list (roles:read), a new role (roles:create), a
// role's name, description and permissions (roles:update), delete (roles:delete). System roles are shown, never
// offered for change; a permission the caller does not hold cannot be ticked (nobody hands out what they do not
// hold). The API still decides and its message shows.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from './api.js';
import { ConfirmButton, ErrorLine, NoticeLine, useChanges } from './widgets.js';

interface Role {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly is_system: boolean;
}

interface PermissionGroup {
  readonly resource: string;
  readonly permissions: readonly { name: string; description: string }[];
}

/** The permissions as checkboxes by resource; ones the caller lacks are disabled unless the role has them. */
const PermissionPicker = ({
  groups,
  selected,
  held,
}: {
  groups: readonly PermissionGroup[];
  selected: readonly string[];
  held: ReadonlySet<string>;
}) => (
  <fieldset class="permission-groups">
    <legend>Permissions</legend>
    {groups.map((g) => (
      <fieldset key={g.resource} class="choices">
        <legend>{g.resource}</legend>
        {g.permissions.map((p) => (
          <label key={p.name} title={p.description}>
            <input
              type="checkbox"
              name="permission"
              value={p.name}
              defaultChecked={selected.includes(p.name)}
              disabled={!held.has(p.name) && !selected.includes(p.name)}
            />{' '}
            {p.name}
          </label>
        ))}
      </fieldset>
    ))}
  </fieldset>
);

/** `permissions`: the caller's, which decide what is offered and which permissions may be ticked. */
/** A new role with the permissions chosen (among those the caller holds). */
const NewRoleForm = ({
  groups,
  held,
  change,
}: {
  groups: readonly PermissionGroup[];
  held: ReadonlySet<string>;
  change: (work: () => Promise<unknown>, done: string) => Promise<boolean>;
}) => {
  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const name = String(form.get('name')).trim();
    const description = String(form.get('description') ?? '');
    const chosen = form.getAll('permission').map(String);
    const done = await change(async () => {
      const role = await api<Role>('POST', '/admin/roles', { name, ...(description === '' ? {} : { description }) });
      if (chosen.length > 0)
        await api('POST', `/admin/roles/${encodeURIComponent(role.id)}/permissions`, { permissions: chosen });
    }, `Role ${name} created.`);
    if (done) formElement.reset();
  };

  return (
    <form class="stack-form" aria-label="New role" onSubmit={(e) => void create(e)}>
      <fieldset>
        <legend>New role</legend>
        <label>
          Role name <input name="name" required />
        </label>
        <label>
          Description <input name="description" />
        </label>
        <PermissionPicker groups={groups} selected={[]} held={held} />
        <button type="submit">Create role</button>
      </fieldset>
    </form>
  );
};

export const Roles = ({
  permissions,
  onRoles,
}: {
  permissions: ReadonlySet<string>;
  onRoles: (names: string[]) => void;
}) => {
  const [roles, setRoles] = useState<Role[]>([]);
  const [groups, setGroups] = useState<PermissionGroup[]>([]);
  const [editing, setEditing] = useState<{ role: Role; permissions: string[] } | undefined>();
  const mayCreate = permissions.has('roles:create');
  const mayUpdate = permissions.has('roles:update');
  const mayDelete = permissions.has('roles:delete');

  const { error, notice, setError, change } = useChanges(() => load());
  const load = () =>
    api<{ data: Role[] }>('GET', '/admin/roles?limit=100').then(
      (answer) => {
        setRoles(answer.data);
        onRoles(answer.data.map((r) => r.name));
      },
      (e: unknown) => setError(errorText(e)),
    );
  useEffect(() => {
    void load();
    if (mayCreate || mayUpdate)
      void api<PermissionGroup[]>('GET', '/admin/permissions').then(setGroups, (e: unknown) => setError(errorText(e)));
  }, []);

  const open = async (role: Role) => {
    if (editing?.role.id === role.id) return setEditing(undefined);
    try {
      const detail = await api<{ permissions: string[] }>('GET', `/admin/roles/${encodeURIComponent(role.id)}`);
      setEditing({ role, permissions: detail.permissions });
    } catch (e) {
      setError(errorText(e));
    }
  };

  const save = async (event: SubmitEvent) => {
    event.preventDefault();
    if (editing === undefined) return;
    const { role, permissions: before } = editing;
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const name = String(form.get('name')).trim();
    const description = String(form.get('description') ?? '');
    const after = form.getAll('permission').map(String);
    const added = after.filter((p) => !before.includes(p));
    const removed = before.filter((p) => !after.includes(p));
    const path = `/admin/roles/${encodeURIComponent(role.id)}`;
    const done = await change(async () => {
      if (name !== role.name || description !== (role.description ?? '')) await api('PUT', path, { name, description });
      if (added.length > 0) await api('POST', `${path}/permissions`, { permissions: added });
      if (removed.length > 0) await api('POST', `${path}/permissions/remove`, { permissions: removed });
    }, `Role ${name} saved.`);
    if (done) setEditing(undefined);
  };

  const remove = (role: Role) =>
    change(() => api('DELETE', `/admin/roles/${encodeURIComponent(role.id)}`), `Role ${role.name} deleted.`);

  return (
    <section aria-labelledby="roles-title">
      <h2 id="roles-title">Roles</h2>
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      <ul class="plain roles">
        {roles.map((r) => (
          <li key={r.id} data-role-id={r.id}>
            <strong>{r.name}</strong> {r.is_system ? <span class="muted">(system)</span> : null}{' '}
            {r.description ? <span class="muted">{r.description}</span> : null}
            {!r.is_system && (mayUpdate || mayDelete) ? (
              <span class="row-actions">
                {mayUpdate ? (
                  <button
                    type="button"
                    aria-label={`Edit role ${r.name}`}
                    aria-expanded={editing?.role.id === r.id}
                    onClick={() => void open(r)}
                  >
                    Edit
                  </button>
                ) : null}
                {mayDelete ? (
                  <ConfirmButton label="Delete" what={`role ${r.name}`} onConfirm={() => remove(r)} />
                ) : null}
              </span>
            ) : null}
            {editing?.role.id === r.id ? (
              <form class="stack-form" aria-label={`Edit role ${r.name}`} onSubmit={(e) => void save(e)}>
                <label>
                  Role name <input name="name" defaultValue={r.name} required />
                </label>
                <label>
                  Description <input name="description" defaultValue={r.description ?? ''} />
                </label>
                <PermissionPicker groups={groups} selected={editing.permissions} held={permissions} />
                <div class="buttons">
                  <button type="submit">Save role</button>
                  <button type="button" onClick={() => setEditing(undefined)}>
                    Close
                  </button>
                </div>
              </form>
            ) : null}
          </li>
        ))}
      </ul>
      {mayCreate ? <NewRoleForm groups={groups} held={permissions} change={change} /> : null}
    </section>
  );
};
