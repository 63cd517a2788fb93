// Tenants and environments in the admin area, within the caller's permissions: list (`:read`), create, rename or
// edit (`:update`), delete after a confirmation in the page (`:delete`). The API decides the rest (a tenant-scoped
// caller changes neither tenants nor the global environments every tenant shares) and its refusal is shown.
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from './api.js';
import { when } from './format.js';
import { ConfirmButton, ErrorLine, NoticeLine, useChanges } from './widgets.js';

interface Tenant {
  readonly id: string;
  readonly short_id: string;
  readonly name: string;
  readonly slug: string;
  readonly created_at: string;
}

interface Environment {
  readonly id: string;
  readonly short_id: string;
  readonly name: string;
  readonly tenant_id: string | null;
  readonly created_at: string;
}

const text = (form: FormData, name: string) => String(form.get(name) ?? '').trim();

export const Tenants = ({ permissions }: { permissions: ReadonlySet<string> }) => {
  const [tenants, setTenants] = useState<Tenant[] | undefined>();
  const [editing, setEditing] = useState<string | undefined>();
  const load = () =>
    api<{ data: Tenant[] }>('GET', '/tenants?limit=100').then(
      (answer) => setTenants(answer.data),
      (e: unknown) => setError(errorText(e)),
    );
  const { error, notice, setError, change } = useChanges(() => load());
  useEffect(() => {
    void load();
  }, []);

  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const body = { name: text(form, 'name'), slug: text(form, 'slug') };
    if (await change(() => api('POST', '/tenants', body), `Tenant ${body.name} created.`)) formElement.reset();
  };
  const save = async (event: SubmitEvent, tenant: Tenant) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const body = { name: text(form, 'name'), slug: text(form, 'slug') };
    const saved = await change(
      () => api('PUT', `/tenants/${encodeURIComponent(tenant.id)}`, body),
      `Tenant ${body.name} saved.`,
    );
    if (saved) setEditing(undefined);
  };
  const remove = (tenant: Tenant) =>
    change(() => api('DELETE', `/tenants/${encodeURIComponent(tenant.id)}`), `Tenant ${tenant.name} deleted.`);

  const mayUpdate = permissions.has('tenants:update');
  const mayDelete = permissions.has('tenants:delete');
  return (
    <section aria-labelledby="tenants-title">
      <h2 id="tenants-title">Tenants</h2>
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      {tenants === undefined ? null : tenants.length === 0 ? (
        <p>No tenants: every record is global.</p>
      ) : (
        <div class="table-scroll">
          <table class="list tenants">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Slug</th>
                <th scope="col">Created</th>
                {mayUpdate || mayDelete ? (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {tenants.map((t) => (
                <Fragment key={t.id}>
                  <tr data-tenant-id={t.id}>
                    <td>{t.name}</td>
                    <td>
                      <code>{t.slug}</code>
                    </td>
                    <td>{when(t.created_at)}</td>
                    {mayUpdate || mayDelete ? (
                      <td class="row-actions">
                        {mayUpdate ? (
                          <button
                            type="button"
                            aria-label={`Edit tenant ${t.name}`}
                            aria-expanded={editing === t.id}
                            onClick={() => setEditing(editing === t.id ? undefined : t.id)}
                          >
                            Edit
                          </button>
                        ) : null}
                        {mayDelete ? (
                          <ConfirmButton label="Delete" what={`tenant ${t.name}`} onConfirm={() => remove(t)} />
                        ) : null}
                      </td>
                    ) : null}
                  </tr>
                  {editing === t.id ? (
                    <tr class="editor">
                      <td colSpan={4}>
                        <form
                          class="inline-form"
                          aria-label={`Edit tenant ${t.name}`}
                          onSubmit={(e) => void save(e, t)}
                        >
                          <label>
                            Name <input name="name" defaultValue={t.name} required maxLength={255} />
                          </label>
                          <label>
                            Slug <input name="slug" defaultValue={t.slug} required />
                          </label>
                          <button type="submit">Save</button>
                          <button type="button" onClick={() => setEditing(undefined)}>
                            Close
                          </button>
                        </form>
                      </td>
                    </tr>
                  ) : null}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {permissions.has('tenants:create') ? (
        <form class="stack-form" aria-label="New tenant" onSubmit={(e) => void create(e)}>
          <fieldset>
            <legend>New tenant</legend>
            <label>
              Name <input name="name" required maxLength={255} autocomplete="off" />
            </label>
            <label>
              Slug <input name="slug" required autocomplete="off" aria-describedby="tenant-slug-hint" />
              <span id="tenant-slug-hint" class="muted">
                Lower-case letters, digits and dashes, such as <code>team-a</code>.
              </span>
            </label>
            <button type="submit">Create tenant</button>
          </fieldset>
        </form>
      ) : null}
    </section>
  );
};

export const Environments = ({ permissions }: { permissions: ReadonlySet<string> }) => {
  const [environments, setEnvironments] = useState<Environment[] | undefined>();
  const [tenants, setTenants] = useState<Tenant[] | undefined>();
  const [editing, setEditing] = useState<string | undefined>();
  const load = () =>
    api<{ data: Environment[] }>('GET', '/environments?limit=100').then(
      (answer) => setEnvironments(answer.data),
      (e: unknown) => setError(errorText(e)),
    );
  const { error, notice, setError, change } = useChanges(() => load());
  useEffect(() => {
    void load();
    if (permissions.has('tenants:read'))
      void api<{ data: Tenant[] }>('GET', '/tenants?limit=100').then(
        (answer) => setTenants(answer.data),
        () => setTenants(undefined),
      );
  }, []);

  const tenantName = (id: string | null): string =>
    id === null ? 'Global (every tenant)' : (tenants?.find((t) => t.id === id)?.name ?? 'Your tenant');

  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const tenant = form.has('tenant_id') ? text(form, 'tenant_id') : undefined;
    const body = {
      name: text(form, 'name'),
      ...(tenant === undefined ? {} : { tenant_id: tenant === '' ? null : tenant }),
    };
    if (await change(() => api('POST', '/environments', body), `Environment ${body.name} created.`))
      formElement.reset();
  };
  const save = async (event: SubmitEvent, environment: Environment) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const body = { name: text(form, 'name') };
    const saved = await change(
      () => api('PUT', `/environments/${encodeURIComponent(environment.id)}`, body),
      `Environment ${body.name} saved.`,
    );
    if (saved) setEditing(undefined);
  };
  const remove = (environment: Environment) =>
    change(
      () => api('DELETE', `/environments/${encodeURIComponent(environment.id)}`),
      `Environment ${environment.name} deleted.`,
    );

  const mayUpdate = permissions.has('environments:update');
  const mayDelete = permissions.has('environments:delete');
  return (
    <section aria-labelledby="environments-title">
      <h2 id="environments-title">Environments</h2>
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      {environments === undefined ? null : environments.length === 0 ? (
        <p>No environments yet.</p>
      ) : (
        <div class="table-scroll">
          <table class="list environments">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Tenant</th>
                <th scope="col">Created</th>
                {mayUpdate || mayDelete ? (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {environments.map((env) => (
                <Fragment key={env.id}>
                  <tr data-environment-id={env.id}>
                    <td>{env.name}</td>
                    <td data-testid="environment-tenant">{tenantName(env.tenant_id)}</td>
                    <td>{when(env.created_at)}</td>
                    {mayUpdate || mayDelete ? (
                      <td class="row-actions">
                        {mayUpdate ? (
                          <button
                            type="button"
                            aria-label={`Rename environment ${env.name}`}
                            aria-expanded={editing === env.id}
                            onClick={() => setEditing(editing === env.id ? undefined : env.id)}
                          >
                            Rename
                          </button>
                        ) : null}
                        {mayDelete ? (
                          <ConfirmButton
                            label="Delete"
                            what={`environment ${env.name}`}
                            onConfirm={() => remove(env)}
                          />
                        ) : null}
                      </td>
                    ) : null}
                  </tr>
                  {editing === env.id ? (
                    <tr class="editor">
                      <td colSpan={4}>
                        <form
                          class="inline-form"
                          aria-label={`Rename environment ${env.name}`}
                          onSubmit={(e) => void save(e, env)}
                        >
                          <label>
                            Name <input name="name" defaultValue={env.name} required maxLength={255} />
                          </label>
                          <button type="submit">Save</button>
                          <button type="button" onClick={() => setEditing(undefined)}>
                            Close
                          </button>
                        </form>
                      </td>
                    </tr>
                  ) : null}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {permissions.has('environments:create') ? (
        <form class="stack-form" aria-label="New environment" onSubmit={(e) => void create(e)}>
          <fieldset>
            <legend>New environment</legend>
            <label>
              Name <input name="name" required maxLength={255} autocomplete="off" />
            </label>
            {tenants === undefined ? null : (
              <label>
                Tenant
                <select name="tenant_id">
                  <option value="">Global (every tenant)</option>
                  {tenants.map((t) => (
                    <option key={t.id} value={t.id}>
                      {t.name}
                    </option>
                  ))}
                </select>
              </label>
            )}
            <button type="submit">Create environment</button>
          </fieldset>
        </form>
      ) : null}
    </section>
  );
};
