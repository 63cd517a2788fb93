// One identity provider's role mappings: which group (its groups claim) gets which role; add and remove.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api.js';
import { ConfirmButton, ErrorLine, NoticeLine, useChanges } from '../widgets.js';
import { path, type Provider } from './provider-fields.js';

interface Mapping {
  readonly id: string;
  readonly claim_value: string;
  readonly role: string;
}

/** One provider's role mappings: group -> role, add and remove. */
export const Mappings = ({
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
