// Tenants and environments in the admin area, within the caller's permissions: list (`:read`), create, rename or
// edit (`:update`), delete after a confirmation in the page (`:delete`). The API decides the rest (a tenant-scoped
// caller changes neither tenants nor the global environments every tenant shares) and its refusal is shown.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from './api.js';
import { when } from './format.js';
import { RecordTable, type Column } from './record-table.js';
import { ErrorLine, NoticeLine, useChanges } from './widgets.js';

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

const TENANT_COLUMNS: Column<Tenant>[] = [
  { heading: 'Name', cell: (t) => <td>{t.name}</td> },
  {
    heading: 'Slug',
    cell: (t) => (
      <td>
        <code>{t.slug}</code>
      </td>
    ),
  },
  { heading: 'Created', cell: (t) => <td>{when(t.created_at)}</td> },
];

export const Tenants = ({ permissions }: { permissions: ReadonlySet<string> }) => {
  const [tenants, setTenants] = useState<Tenant[] | undefined>();
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
  const save = (form: FormData, tenant: Tenant) => {
    const body = { name: text(form, 'name'), slug: text(form, 'slug') };
    return change(() => api('PUT', `/tenants/${encodeURIComponent(tenant.id)}`, body), `Tenant ${body.name} saved.`);
  };
  const remove = (tenant: Tenant) =>
    change(() => api('DELETE', `/tenants/${encodeURIComponent(tenant.id)}`), `Tenant ${tenant.name} deleted.`);

  return (
    <section aria-labelledby="tenants-title">
      <h2 id="tenants-title">Tenants</h2>
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      {tenants === undefined ? null : tenants.length === 0 ? (
        <p>No tenants: every record is global.</p>
      ) : (
        <RecordTable
          records={tenants}
          kind="tenant"
          columns={TENANT_COLUMNS}
          mayUpdate={permissions.has('tenants:update')}
          mayDelete={permissions.has('tenants:delete')}
          edit="Edit"
          what={(t) => `tenant ${t.name}`}
          fields={(t) => (
            <>
              <label>
                Name <input name="name" defaultValue={t.name} required maxLength={255} />
              </label>
              <label>
                Slug <input name="slug" defaultValue={t.slug} required />
              </label>
            </>
          )}
          onSave={save}
          onDelete={remove}
        />
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
  const save = (form: FormData, environment: Environment) => {
    const body = { name: text(form, 'name') };
    return change(
      () => api('PUT', `/environments/${encodeURIComponent(environment.id)}`, body),
      `Environment ${body.name} saved.`,
    );
  };
  const remove = (environment: Environment) =>
    change(
      () => api('DELETE', `/environments/${encodeURIComponent(environment.id)}`),
      `Environment ${environment.name} deleted.`,
    );

  return (
    <section aria-labelledby="environments-title">
      <h2 id="environments-title">Environments</h2>
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      {environments === undefined ? null : environments.length === 0 ? (
        <p>No environments yet.</p>
      ) : (
        <RecordTable
          records={environments}
          kind="environment"
          columns={[
            { heading: 'Name', cell: (env) => <td>{env.name}</td> },
            { heading: 'Tenant', cell: (env) => <td data-testid="environment-tenant">{tenantName(env.tenant_id)}</td> },
            { heading: 'Created', cell: (env) => <td>{when(env.created_at)}</td> },
          ]}
          mayUpdate={permissions.has('environments:update')}
          mayDelete={permissions.has('environments:delete')}
          edit="Rename"
          what={(env) => `environment ${env.name}`}
          fields={(env) => (
            <label>
              Name <input name="name" defaultValue={env.name} required maxLength={255} />
            </label>
          )}
          onSave={save}
          onDelete={remove}
        />
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
