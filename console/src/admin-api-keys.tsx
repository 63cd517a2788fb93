// The caller's own API keys: the list (api_keys:read) with each key's permissions, expiry ("expired" marked) and last
// use; a new key (api_keys:create) with permissions picked by resource among those the caller holds ("Read only",
// "Everything I hold", "Clear") and an expiry; revoke (api_keys:delete) after a confirmation in the page. The full
// key is shown once, right below the button that made it, with the focus on it.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, type User } from './api.js';
import { when } from './format.js';
import { SecretOnce } from './copy-widgets.js';
import { groupPermissions, resourceLabel } from './people-widgets.js';
import { ConfirmButton, ErrorLine, NoticeLine, useChanges } from './widgets.js';

interface ApiKey {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly key_prefix: string;
  readonly scopes: string[];
  readonly last_used_at: string | null;
  readonly last_used_ip: string | null;
  readonly created_at: string;
  readonly expires_at: string | null;
}

const DAY_MS = 86_400_000;

/** Whole days from today to a `yyyy-mm-dd` date in the reader's zone (the API takes `expires_in_days`). */
export const daysUntil = (date: string, now: Date): number => {
  const [y, m, d] = date.split('-').map(Number);
  if (y === undefined || m === undefined || d === undefined) return Number.NaN;
  const target = new Date(y, m - 1, d).getTime();
  const today = new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
  return Math.round((target - today) / DAY_MS);
};

const isoDate = (date: Date): string =>
  `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;

const Expiry = ({ expiresAt }: { expiresAt: string | null }) => {
  if (expiresAt === null) return <span class="muted">never</span>;
  const expired = new Date(expiresAt).getTime() <= Date.now();
  return expired ? (
    <span class="bad-text">
      <strong>expired</strong> {when(expiresAt)}
    </span>
  ) : (
    <span>{when(expiresAt)}</span>
  );
};

/** The caller's keys: name, prefix, permissions folded, expiry, last use, and revoke when allowed. */
const KeysTable = ({
  keys,
  mayDelete,
  revoke,
}: {
  keys: readonly ApiKey[];
  mayDelete: boolean;
  revoke: (key: ApiKey) => Promise<unknown>;
}) => (
  <div class="table-scroll">
    <table class="list api-keys">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Key</th>
          <th scope="col">Permissions</th>
          <th scope="col">Expires</th>
          <th scope="col">Last used</th>
          {mayDelete ? (
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          ) : null}
        </tr>
      </thead>
      <tbody>
        {keys.map((k) => (
          <tr key={k.id} data-key-id={k.id}>
            <td>
              {k.name}
              {k.description ? <div class="muted">{k.description}</div> : null}
            </td>
            <td>
              <code>{k.key_prefix}…</code>
            </td>
            <td>
              <details>
                <summary>
                  {k.scopes.length} permission{k.scopes.length === 1 ? '' : 's'}
                </summary>
                <ul class="plain scopes" data-testid="key-scopes">
                  {k.scopes.map((s) => (
                    <li key={s}>{s}</li>
                  ))}
                </ul>
              </details>
            </td>
            <td data-testid="key-expiry">
              <Expiry expiresAt={k.expires_at} />
            </td>
            <td data-testid="key-last-used">
              {k.last_used_at === null ? (
                <span class="muted">never</span>
              ) : (
                <>
                  {when(k.last_used_at)}
                  {k.last_used_ip ? <div class="muted">from {k.last_used_ip}</div> : null}
                </>
              )}
            </td>
            {mayDelete ? (
              <td class="row-actions">
                <ConfirmButton label="Revoke" what={`key ${k.name}`} onConfirm={() => revoke(k)} />
              </td>
            ) : null}
          </tr>
        ))}
      </tbody>
    </table>
  </div>
);

/** The permissions a new key gets, grouped by resource, with the three shortcuts; only those the caller holds. */
const PermissionPicker = ({
  held,
  chosen,
  setChosen,
}: {
  held: readonly string[];
  chosen: ReadonlySet<string>;
  setChosen: (next: ReadonlySet<string>) => void;
}) => {
  const groups = groupPermissions(held);
  const toggle = (name: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(name);
    else next.delete(name);
    setChosen(next);
  };
  return (
    <fieldset class="permission-groups">
      <legend>Permissions (only those you hold)</legend>
      <div class="buttons shortcuts">
        <button type="button" onClick={() => setChosen(new Set(held.filter((p) => p.endsWith(':read'))))}>
          Read only
        </button>
        <button type="button" onClick={() => setChosen(new Set(held))}>
          Everything I hold
        </button>
        <button type="button" onClick={() => setChosen(new Set())}>
          Clear
        </button>
        <span class="muted" role="status">
          {chosen.size} of {held.length} chosen
        </span>
      </div>
      {groups.map((g) => (
        <fieldset key={g.resource} class="choices" data-resource={g.resource}>
          <legend>{resourceLabel(g.resource)}</legend>
          {g.permissions.map((p) => (
            <label key={p}>
              <input
                type="checkbox"
                name="scope"
                value={p}
                checked={chosen.has(p)}
                onChange={(e) => toggle(p, e.currentTarget.checked)}
              />{' '}
              {p}
            </label>
          ))}
        </fieldset>
      ))}
    </fieldset>
  );
};

export const ApiKeys = ({ user, permissions }: { user: User; permissions: ReadonlySet<string> }) => {
  const [keys, setKeys] = useState<ApiKey[]>([]);
  const [fullKey, setFullKey] = useState<{ name: string; key: string } | undefined>();
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set());
  const [expiry, setExpiry] = useState('90');

  const load = () =>
    api<{ api_keys: ApiKey[] }>('GET', '/auth/api-keys').then(
      (answer) => setKeys(answer.api_keys),
      (e: unknown) => setError(errorText(e)),
    );
  const { error, notice, setError, change } = useChanges(() => load());
  useEffect(() => {
    void load();
  }, []);

  const held = user.permissions;

  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const name = String(form.get('name')).trim();
    const description = String(form.get('description') ?? '').trim();
    setFullKey(undefined);
    if (chosen.size === 0) return setError('Choose at least one permission for the key.');
    let days: number | undefined;
    if (expiry === 'date') {
      days = daysUntil(String(form.get('expiry_date') ?? ''), new Date());
      if (!(days >= 1)) return setError('The expiry date must be after today.');
    } else if (expiry !== '') days = Number(expiry);
    const body = {
      name,
      ...(description === '' ? {} : { description }),
      scopes: [...chosen],
      ...(days === undefined ? {} : { expires_in_days: days }),
    };
    let created: { full_key: string } | undefined;
    const done = await change(async () => {
      created = await api<{ full_key: string }>('POST', '/auth/api-keys', body);
    }, `Key ${name} created.`);
    if (done && created !== undefined) {
      setFullKey({ name, key: created.full_key });
      formElement.reset();
      setChosen(new Set());
      setExpiry('90');
    }
  };

  const revoke = (key: ApiKey) =>
    change(() => api('DELETE', `/auth/api-keys/${encodeURIComponent(key.id)}`), `Key ${key.name} revoked.`);

  const mayDelete = permissions.has('api_keys:delete');
  const tomorrow = isoDate(new Date(Date.now() + DAY_MS));
  return (
    <section aria-labelledby="api-keys-title">
      <h2 id="api-keys-title">Your API keys</h2>
      <p class="muted">
        A key acts as you, with only the permissions you give it, for scripts and CI (
        <code>Authorization: Bearer dpl_…</code>). Signing out does not end a key: revoke it here.
      </p>
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      {keys.length === 0 ? <p>No keys yet.</p> : <KeysTable keys={keys} mayDelete={mayDelete} revoke={revoke} />}
      {permissions.has('api_keys:create') ? (
        <form class="stack-form wide" aria-label="New API key" onSubmit={(e) => void create(e)}>
          <fieldset>
            <legend>New API key</legend>
            <label>
              Name <input name="name" required maxLength={255} autocomplete="off" />
            </label>
            <label>
              Description <input name="description" maxLength={1000} autocomplete="off" />
            </label>
            <PermissionPicker held={held} chosen={chosen} setChosen={setChosen} />
            <label>
              Expires
              <select name="expiry" value={expiry} onChange={(e) => setExpiry(e.currentTarget.value)}>
                <option value="30">in 30 days</option>
                <option value="90">in 90 days</option>
                <option value="365">in 365 days</option>
                <option value="date">on a date…</option>
                <option value="">never</option>
              </select>
            </label>
            {expiry === 'date' ? (
              <label>
                Expiry date <input type="date" name="expiry_date" min={tomorrow} required />
              </label>
            ) : null}
            <button type="submit">Create key</button>
            {fullKey === undefined ? null : (
              <SecretOnce
                title={`Your new key “${fullKey.name}”`}
                secret={fullKey.key}
                id="full-key"
                onDone={() => setFullKey(undefined)}
              />
            )}
          </fieldset>
        </form>
      ) : null}
    </section>
  );
};
