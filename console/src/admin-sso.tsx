// Administration: identity providers (single sign-on) and their role mappings, within the caller's permissions: the
// list (identity_providers:read), a new provider (identity_providers:create: the issuer's endpoints read from its
// discovery document, and a provider that cannot be reached refused with the API's reason), edit, enable or disable,
// mappings and the connection test (identity_providers:update), delete (identity_providers:delete). The API decides.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from './api.js';
import { when } from './format.js';
import { CopyValue } from './copy-widgets.js';
import { ConfirmButton, ErrorLine, NoticeLine, useChanges } from './widgets.js';

interface Provider {
  readonly id: string;
  readonly name: string;
  readonly issuer: string;
  readonly client_id: string;
  readonly token_endpoint_auth_method: string;
  readonly scopes: string[];
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly userinfo_endpoint: string | null;
  readonly jwks_uri: string;
  readonly id_token_signing_alg_values: string[];
  readonly email_claim: string;
  readonly groups_claim: string;
  readonly jit_provisioning: boolean;
  readonly jit_tenant_id: string | null;
  readonly jit_trust_unverified_email: boolean;
  readonly link_by_email: boolean;
  readonly trusted_for_2fa: boolean;
  readonly enabled: boolean;
  readonly redirect_uri: string;
  readonly linked_users: number;
  readonly updated_at: string;
}

interface Mapping {
  readonly id: string;
  readonly claim_value: string;
  readonly role: string;
}

interface Discovered {
  readonly issuer: string;
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly userinfo_endpoint: string | null;
  readonly jwks_uri: string;
}

interface Check {
  readonly name: string;
  readonly passed: boolean;
  readonly message: string;
}

const path = (id: string) => `/admin/identity-providers/${encodeURIComponent(id)}`;

const ENDPOINTS = [
  ['authorization_endpoint', 'Authorization endpoint'],
  ['token_endpoint', 'Token endpoint'],
  ['jwks_uri', 'JWKS URI'],
  ['userinfo_endpoint', 'Userinfo endpoint (optional)'],
] as const;

const FLAGS = [
  ['enabled', 'Enabled: offered on the sign-in page'],
  ['jit_provisioning', 'Create accounts at first sign-in (just-in-time provisioning)'],
  ['link_by_email', 'Link an existing account with the same verified email'],
  ['trusted_for_2fa', 'The provider’s sign-in stands in for two-factor'],
  ['jit_trust_unverified_email', 'Also create accounts for emails the provider does not assert as verified'],
] as const;

const words = (text: string) => text.split(/[\s,]+/).filter((w) => w !== '');

/** The settings the form says, as the API takes them; with `before`, only what changed. */
const settingsOf = (form: FormData, before?: Provider): Record<string, unknown> => {
  const text = (name: string) => String(form.get(name) ?? '').trim();
  const all: Record<string, unknown> = {
    name: text('name'),
    issuer: text('issuer'),
    client_id: text('client_id'),
    token_endpoint_auth_method: text('token_endpoint_auth_method'),
    scopes: words(text('scopes')),
    authorization_endpoint: text('authorization_endpoint'),
    token_endpoint: text('token_endpoint'),
    jwks_uri: text('jwks_uri'),
    userinfo_endpoint: text('userinfo_endpoint') === '' ? null : text('userinfo_endpoint'),
    id_token_signing_alg_values: words(text('id_token_signing_alg_values')),
    email_claim: text('email_claim'),
    groups_claim: text('groups_claim'),
    ...Object.fromEntries(FLAGS.map(([name]) => [name, form.get(name) === 'on'])),
  };
  if (form.has('jit_tenant_id')) all['jit_tenant_id'] = text('jit_tenant_id') === '' ? null : text('jit_tenant_id');
  const secret = text('client_secret');
  if (before === undefined) return { ...all, client_secret: secret };
  const changed = Object.fromEntries(
    Object.entries(all).filter(
      ([name, value]) => JSON.stringify(value) !== JSON.stringify((before as unknown as Record<string, unknown>)[name]),
    ),
  );
  return secret === '' ? changed : { ...changed, client_secret: secret };
};

/** The provider's settings; for a new one, "Read endpoints" fills the endpoints from the issuer's discovery document. */
const ProviderFields = ({
  provider,
  tenants,
}: {
  provider?: Provider;
  tenants: readonly { id: string; name: string }[] | undefined;
}) => {
  const [found, setFound] = useState<Discovered | undefined>();
  const [discovery, setDiscovery] = useState<{ error?: string; notice?: string }>({});
  const discover = async (event: Event) => {
    const form = (event.currentTarget as HTMLButtonElement).form!;
    const url = String(new FormData(form).get('issuer') ?? '').trim();
    setDiscovery({});
    try {
      const answer = await api<Discovered>('POST', '/admin/identity-providers/discover', { url });
      setFound(answer);
      for (const [name] of ENDPOINTS) (form.elements.namedItem(name) as HTMLInputElement).value = answer[name] ?? '';
      (form.elements.namedItem('issuer') as HTMLInputElement).value = answer.issuer;
      setDiscovery({ notice: `Endpoints read from ${answer.issuer}.` });
    } catch (e) {
      setDiscovery({ error: errorText(e) });
    }
  };
  const value = (name: (typeof ENDPOINTS)[number][0]) => found?.[name] ?? provider?.[name] ?? '';
  return (
    <>
      <label>
        Name <input name="name" required maxLength={255} defaultValue={provider?.name} />
      </label>
      <label>
        Issuer URL <input name="issuer" type="url" required defaultValue={provider?.issuer} />
      </label>
      <div class="buttons">
        <button type="button" onClick={(e) => void discover(e)}>
          Read endpoints
        </button>
      </div>
      <ErrorLine message={discovery.error} />
      <NoticeLine message={discovery.notice} />
      <label>
        Client ID <input name="client_id" required defaultValue={provider?.client_id} autoComplete="off" />
      </label>
      <label>
        Client secret{provider === undefined ? '' : ' (empty: keep the stored one)'}
        <input name="client_secret" type="password" required={provider === undefined} autoComplete="new-password" />
      </label>
      {ENDPOINTS.map(([name, label]) => (
        <label key={`${name}-${found?.issuer ?? ''}`}>
          {label}
          <input
            name={name}
            type="url"
            required={provider !== undefined && name !== 'userinfo_endpoint'}
            placeholder={provider === undefined ? 'read from the issuer when empty' : undefined}
            defaultValue={value(name)}
          />
        </label>
      ))}
      <fieldset class="choices">
        <legend>Sign-in</legend>
        {FLAGS.map(([name, label]) => (
          <label key={name}>
            <input
              type="checkbox"
              name={name}
              defaultChecked={provider === undefined ? name === 'enabled' : provider[name]}
            />{' '}
            {label}
          </label>
        ))}
      </fieldset>
      {tenants === undefined ? null : (
        <label>
          Tenant of the accounts it creates
          <select
            name="jit_tenant_id"
            aria-label="Tenant of the accounts it creates"
            defaultValue={provider?.jit_tenant_id ?? ''}
          >
            <option value="">No tenant (global users)</option>
            {tenants.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        </label>
      )}
      <details>
        <summary>More settings</summary>
        <div class="stack-form">
          <label>
            Scopes (space-separated)
            <input name="scopes" defaultValue={(provider?.scopes ?? ['openid', 'email', 'profile']).join(' ')} />
          </label>
          <label>
            Token endpoint authentication
            <select
              name="token_endpoint_auth_method"
              aria-label="Token endpoint authentication"
              defaultValue={provider?.token_endpoint_auth_method ?? 'client_secret_basic'}
            >
              <option value="client_secret_basic">client_secret_basic</option>
              <option value="client_secret_post">client_secret_post</option>
            </select>
          </label>
          <label>
            ID token algorithms (space-separated)
            <input
              name="id_token_signing_alg_values"
              defaultValue={(provider?.id_token_signing_alg_values ?? ['RS256']).join(' ')}
            />
          </label>
          <label>
            Email claim <input name="email_claim" defaultValue={provider?.email_claim ?? 'email'} />
          </label>
          <label>
            Groups claim (what role mappings match)
            <input name="groups_claim" defaultValue={provider?.groups_claim ?? 'groups'} />
          </label>
        </div>
      </details>
    </>
  );
};

/** One provider's role mappings: group -> role, add and remove. */
const Mappings = ({
  provider,
  mayUpdate,
  roleNames,
}: {
  provider: Provider;
  mayUpdate: boolean;
  roleNames: readonly string[] | undefined;
}) => {
  const [mappings, setMappings] = useState<Mapping[]>([]);
  const { error, notice, setError, change } = useChanges(() => load());
  const load = () =>
    api<Mapping[]>('GET', `${path(provider.id)}/role-mappings`).then(setMappings, (e: unknown) =>
      setError(errorText(e)),
    );
  useEffect(() => void load(), [provider.id]);

  const add = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const claim = String(form.get('claim_value')).trim();
    const role = String(form.get('role')).trim();
    const done = await change(
      () => api('POST', `${path(provider.id)}/role-mappings`, { claim_value: claim, role }),
      `Members of ${claim} now get the role ${role}.`,
    );
    if (done) formElement.reset();
  };

  return (
    <section aria-labelledby={`mappings-${provider.id}`}>
      <h4 id={`mappings-${provider.id}`}>Role mappings of {provider.name}</h4>
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      {mappings.length === 0 ? (
        <p class="muted">No mappings: users it signs in get no role from it.</p>
      ) : (
        <div class="table-scroll">
          <table class="list">
            <thead>
              <tr>
                <th scope="col">Group ({provider.groups_claim})</th>
                <th scope="col">Role</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {mappings.map((m) => (
                <tr key={m.id} data-mapping-id={m.id}>
                  <td>{m.claim_value}</td>
                  <td>{m.role}</td>
                  <td class="row-actions">
                    {mayUpdate ? (
                      <ConfirmButton
                        label="Remove"
                        confirm="Confirm remove"
                        what={`mapping ${m.claim_value} to ${m.role}`}
                        onConfirm={() =>
                          change(
                            () => api('DELETE', `${path(provider.id)}/role-mappings/${encodeURIComponent(m.id)}`),
                            `The mapping of ${m.claim_value} to ${m.role} is removed.`,
                          )
                        }
                      />
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {mayUpdate ? (
        <form class="inline-form" aria-label={`New role mapping of ${provider.name}`} onSubmit={(e) => void add(e)}>
          <label>
            Group <input name="claim_value" required maxLength={255} />
          </label>
          {roleNames === undefined ? (
            <label>
              Role <input name="role" required />
            </label>
          ) : (
            <label>
              Role
              <select name="role" aria-label="Role" required>
                {roleNames.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            </label>
          )}
          <button type="submit">Add mapping</button>
        </form>
      ) : null}
    </section>
  );
};

export const IdentityProviders = ({ permissions }: { permissions: ReadonlySet<string> }) => {
  const [providers, setProviders] = useState<Provider[] | undefined>();
  const [open, setOpen] = useState<{ id: string; view: 'edit' | 'mappings' } | undefined>();
  const [checks, setChecks] = useState<{ id: string; checks: Check[] } | undefined>();
  const [roleNames, setRoleNames] = useState<string[] | undefined>();
  const [tenants, setTenants] = useState<{ id: string; name: string }[] | undefined>();
  const [created, setCreated] = useState<Provider | undefined>();
  const mayCreate = permissions.has('identity_providers:create');
  const mayUpdate = permissions.has('identity_providers:update');
  const mayDelete = permissions.has('identity_providers:delete');

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

  const toggle = (id: string, view: 'edit' | 'mappings') =>
    setOpen(open?.id === id && open.view === view ? undefined : { id, view });

  return (
    <section aria-labelledby="idp-title">
      <h2 id="idp-title">Identity providers</h2>
      <p class="muted">
        OpenID Connect providers people sign in with (“Sign in with …” on the sign-in page); their groups map to roles.
      </p>
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      {created === undefined ? null : (
        <section class="secret-once" aria-labelledby="idp-created-title">
          <h3 id="idp-created-title">Register the redirect URI at {created.name}</h3>
          <p>The provider sends people back here after they sign in; register exactly this URI with the client:</p>
          <p>
            <CopyValue value={created.redirect_uri} label="redirect URI" />
          </p>
          <button type="button" onClick={() => setCreated(undefined)}>
            Done
          </button>
        </section>
      )}
      {providers === undefined ? (
        <p>Loading…</p>
      ) : providers.length === 0 ? (
        <p>No identity providers yet.</p>
      ) : (
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
            <tbody>
              {providers.map((p) => (
                <tr key={p.id} data-provider-id={p.id}>
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
                      aria-expanded={open?.id === p.id && open.view === 'mappings'}
                      onClick={() => toggle(p.id, 'mappings')}
                    >
                      Mappings
                    </button>
                    {mayUpdate ? (
                      <>
                        <button
                          type="button"
                          aria-label={`Edit ${p.name}`}
                          aria-expanded={open?.id === p.id && open.view === 'edit'}
                          onClick={() => toggle(p.id, 'edit')}
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
                        <button type="button" aria-label={`Test ${p.name}`} onClick={() => void test(p)}>
                          Test
                        </button>
                      </>
                    ) : null}
                    {mayDelete ? (
                      <ConfirmButton
                        label="Delete"
                        confirm="Confirm delete"
                        what={p.name}
                        onConfirm={() =>
                          change(() => api('DELETE', path(p.id)), `Identity provider ${p.name} deleted.`)
                        }
                      />
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {providers?.map((p) =>
        checks?.id === p.id ? (
          <section key={`checks-${p.id}`} aria-labelledby="idp-checks-title">
            <h3 id="idp-checks-title">Test of {p.name}</h3>
            <ul class="plain">
              {checks.checks.map((c) => (
                <li key={c.name}>
                  <span class={c.passed ? 'state ok' : 'state bad'}>{c.passed ? 'passed' : 'failed'}</span>{' '}
                  {c.name.replace('_', ' ')}: {c.message}
                </li>
              ))}
            </ul>
          </section>
        ) : null,
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
      {mayCreate ? (
        <form class="stack-form" aria-label="New identity provider" onSubmit={(e) => void create(e)}>
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
