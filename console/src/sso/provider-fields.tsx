// An identity provider's settings: the record as the API answers it, the form's fields (for a new one, "Read
// endpoints" fills the endpoints from the issuer's discovery document), and the settings the form says.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api.js';
import { ErrorLine, NoticeLine } from '../widgets.js';

export interface Provider {
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

export interface Discovered {
  readonly issuer: string;
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly userinfo_endpoint: string | null;
  readonly jwks_uri: string;
}

export const path = (id: string) => `/admin/identity-providers/${encodeURIComponent(id)}`;

export const ENDPOINTS = [
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
export const settingsOf = (form: FormData, before?: Provider): Record<string, unknown> => {
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

/** The settings most providers need as they are: scopes, client authentication, algorithms, claims. */
const MoreSettings = ({ provider }: { provider?: Provider }) => (
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
);

/** The provider's settings; for a new one, "Read endpoints" fills the endpoints from the issuer's discovery document. */
export const ProviderFields = ({
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
      <MoreSettings provider={provider} />
    </>
  );
};
