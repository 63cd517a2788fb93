// Administration: identity providers (single sign-on) and their role mappings, within the caller's permissions: the
// list (identity_providers:read), a new provider (identity_providers:create: the issuer's endpoints read from its
// discovery document, and a provider that cannot be reached refused with the API's reason), edit, enable or disable,
// mappings and the connection test (identity_providers:update), delete (identity_providers:delete). The API decides.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api.js';
import { CopyValue } from '../copy-widgets.js';
import { when } from '../format.js';
import { ConfirmButton, ErrorLine, NoticeLine, useChanges } from '../widgets.js';
import { Mappings } from './mappings.js';
import { ENDPOINTS, path, ProviderFields, settingsOf, type Discovered, type Provider } from './provider-fields.js';

interface Check {
  readonly name: string;
  readonly passed: boolean;
  readonly message: string;
}

type Change = (work: () => Promise<unknown>, done: string) => Promise<boolean>;
type View = 'edit' | 'mappings';

/** A provider's row: its state, and the buttons the caller may use. */
const ProviderRow = ({
  provider: p,
  permissions,
  isOpen,
  toggle,
  change,
  onTest,
}: {
  provider: Provider;
  permissions: ReadonlySet<string>;
  isOpen: (view: View) => boolean;
  toggle: (view: View) => void;
  change: Change;
  onTest: () => void;
}) => (
  <tr data-provider-id={p.id}>
    <td>{p.name}</td>
    <td class="long">{p.issuer}</td>
    <td>
      <span class={p.enabled ? 'state ok' : 'state off'}>{p.enabled ? 'enabled' : 'disabled'}</span>
    </td>
    <td>{p.linked_users}</td>
    <td>{when(p.updated_at)}</td>
    <td class="row-actions">
      <button
        type="button"
        aria-label={`Role mappings of ${p.name}`}
        aria-expanded={isOpen('mappings')}
        onClick={() => toggle('mappings')}
      >
        Mappings
      </button>
      {permissions.has('identity_providers:update') ? (
        <>
          <button
            type="button"
            aria-label={`Edit ${p.name}`}
            aria-expanded={isOpen('edit')}
            onClick={() => toggle('edit')}
          >
            Edit
          </button>
          <button
            type="button"
            aria-label={`${p.enabled ? 'Disable' : 'Enable'} ${p.name}`}
            onClick={() =>
              void change(
                () => api('PUT', path(p.id), { enabled: !p.enabled }),
                `${p.name} ${p.enabled ? 'disabled: no longer offered at sign-in' : 'enabled'}.`,
              )
            }
          >
            {p.enabled ? 'Disable' : 'Enable'}
          </button>
          <button type="button" aria-label={`Test ${p.name}`} onClick={onTest}>
            Test
          </button>
        </>
      ) : null}
      {permissions.has('identity_providers:delete') ? (
        <ConfirmButton
          label="Delete"
          confirm="Confirm delete"
          what={p.name}
          onConfirm={() => change(() => api('DELETE', path(p.id)), `Identity provider ${p.name} deleted.`)}
        />
      ) : null}
    </td>
  </tr>
);

const ProviderTable = ({ children }: { children: ComponentChildren }) => (
  <div class="table-scroll">
    <table class="list identity-providers">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Issuer</th>
          <th scope="col">Status</th>
          <th scope="col">Linked users</th>
          <th scope="col">Changed</th>
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  </div>
);

const TestResults = ({ provider, checks }: { provider: Provider; checks: readonly Check[] }) => (
  <section aria-labelledby="idp-checks-title">
    <h3 id="idp-checks-title">Test of {provider.name}</h3>
    <ul class="plain">
      {checks.map((c) => (
        <li key={c.name}>
          <span class={c.passed ? 'state ok' : 'state bad'}>{c.passed ? 'passed' : 'failed'}</span>{' '}
          {c.name.replace('_', ' ')}: {c.message}
        </li>
      ))}
    </ul>
  </section>
);

/** A new provider's create, and the provider just added (its redirect URI is to be registered at it). */
const useNewProvider = (change: Change) => {
  const [created, setCreated] = useState<Provider | undefined>();
  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const body = settingsOf(new FormData(formElement));
    let made: Provider | undefined;
    const done = await change(
      async () => {
        // Endpoints left empty are read from the issuer's discovery document (what "Read endpoints" does).
        if (ENDPOINTS.some(([name]) => name !== 'userinfo_endpoint' && body[name] === '')) {
          const found = await api<Discovered>('POST', '/admin/identity-providers/discover', { url: body['issuer'] });
          for (const [name] of ENDPOINTS) if (body[name] === '' || body[name] === null) body[name] = found[name];
          body['issuer'] = found.issuer;
        }
        made = await api<Provider>('POST', '/admin/identity-providers', body);
      },
      `Identity provider ${String(body['name'])} added.`,
    );
    if (done) {
      formElement.reset();
      setCreated(made);
    }
  };
  return { created, setCreated, create };
};

export const IdentityProviders = ({ permissions }: { permissions: ReadonlySet<string> }) => {
  const [providers, setProviders] = useState<Provider[] | undefined>();
  const [open, setOpen] = useState<{ id: string; view: View } | undefined>();
  const [checks, setChecks] = useState<{ id: string; checks: Check[] } | undefined>();
  const [roleNames, setRoleNames] = useState<string[] | undefined>();
  const [tenants, setTenants] = useState<{ id: string; name: string }[] | undefined>();
  const mayUpdate = permissions.has('identity_providers:update');

  const { error, notice, setError, change } = useChanges(() => load());
  const load = () =>
    api<{ data: Provider[] }>('GET', '/admin/identity-providers?limit=100').then(
      (answer) => setProviders(answer.data),
      (e: unknown) => setError(errorText(e)),
    );
  useEffect(() => {
    void load();
    if (permissions.has('roles:read'))
      void api<{ data: { name: string }[] }>('GET', '/admin/roles?limit=100').then(
        (answer) => setRoleNames(answer.data.map((r) => r.name)),
        () => undefined,
      );
    if (permissions.has('tenants:read'))
      void api<{ data: { id: string; name: string }[] }>('GET', '/tenants?limit=100').then(
        (answer) => setTenants(answer.data),
        () => undefined,
      );
  }, []);
  const added = useNewProvider(change);

  const save = async (event: SubmitEvent, provider: Provider) => {
    event.preventDefault();
    const body = settingsOf(new FormData(event.currentTarget as HTMLFormElement), provider);
    if (Object.keys(body).length === 0) return setOpen(undefined);
    const done = await change(() => api('PUT', path(provider.id), body), `Identity provider ${provider.name} saved.`);
    if (done) setOpen(undefined);
  };

  const test = async (provider: Provider) => {
    setChecks(undefined);
    try {
      const answer = await api<{ checks: Check[] }>('POST', `${path(provider.id)}/test`);
      setChecks({ id: provider.id, checks: answer.checks });
    } catch (e) {
      setError(errorText(e));
    }
  };

  const isOpen = (id: string, view: View) => open?.id === id && open.view === view;
  return (
    <section aria-labelledby="idp-title">
      <h2 id="idp-title">Identity providers</h2>
      <p class="muted">
        OpenID Connect providers people sign in with (“Sign in with …” on the sign-in page); their groups map to roles.
      </p>
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      {added.created === undefined ? null : (
        <section class="secret-once" aria-labelledby="idp-created-title">
          <h3 id="idp-created-title">Register the redirect URI at {added.created.name}</h3>
          <p>The provider sends people back here after they sign in; register exactly this URI with the client:</p>
          <p>
            <CopyValue value={added.created.redirect_uri} label="redirect URI" />
          </p>
          <button type="button" onClick={() => added.setCreated(undefined)}>
            Done
          </button>
        </section>
      )}
      {providers === undefined ? (
        <p>Loading…</p>
      ) : providers.length === 0 ? (
        <p>No identity providers yet.</p>
      ) : (
        <ProviderTable>
          {providers.map((p) => (
            <ProviderRow
              key={p.id}
              provider={p}
              permissions={permissions}
              isOpen={(view) => isOpen(p.id, view)}
              toggle={(view) => setOpen(isOpen(p.id, view) ? undefined : { id: p.id, view })}
              change={change}
              onTest={() => void test(p)}
            />
          ))}
        </ProviderTable>
      )}
      {providers?.map((p) =>
        checks?.id === p.id ? <TestResults key={`checks-${p.id}`} provider={p} checks={checks.checks} /> : null,
      )}
      {providers?.map((p) =>
        open?.id !== p.id ? null : open.view === 'mappings' ? (
          <Mappings key={`m-${p.id}`} provider={p} mayUpdate={mayUpdate} roleNames={roleNames} />
        ) : (
          <form key={`e-${p.id}`} class="stack-form" aria-label={`Edit ${p.name}`} onSubmit={(e) => void save(e, p)}>
            <h3>Edit {p.name}</h3>
            <p>
              Redirect URI to register at the provider: <CopyValue value={p.redirect_uri} label="redirect URI" />
            </p>
            <ProviderFields provider={p} tenants={tenants} />
            <div class="buttons">
              <button type="submit">Save provider</button>
              <button type="button" onClick={() => setOpen(undefined)}>
                Close
              </button>
            </div>
          </form>
        ),
      )}
      {permissions.has('identity_providers:create') ? (
        <form class="stack-form" aria-label="New identity provider" onSubmit={(e) => void added.create(e)}>
          <fieldset>
            <legend>New identity provider</legend>
            <ProviderFields tenants={tenants} />
            <button type="submit">Add provider</button>
          </fieldset>
        </form>
      ) : null}
    </section>
  );
};
