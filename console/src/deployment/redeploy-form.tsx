// The redeploy form of an ended deployment: its variables to change (a secret shows empty, "unchanged"), and the
// POST /deployments/{id}/redeploy that opens the new deployment's page.
import { api, isApiError } from '../api.js';
import { SECRET_MASK } from './records.js';

export const RedeployForm = ({
  id,
  variables,
  onError,
}: {
  id: string;
  variables: Record<string, string>;
  onError: (message: string) => void;
}) => {
  const redeploy = async (event: SubmitEvent) => {
    event.preventDefault();
    // Only what was changed is sent (the API merges it over the original); a secret left empty keeps its value,
    // which the console never saw: the API shows secrets as ***.
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const changed = Object.fromEntries(
      Object.entries(variables).flatMap(([name, value]) => {
        const given = String(form.get(`var-${name}`) ?? '');
        const secret = value === SECRET_MASK;
        return (secret && given !== '') || (!secret && given !== value) ? [[name, given]] : [];
      }),
    );
    try {
      const next = await api<{ id: string }>(
        'POST',
        `/deployments/${encodeURIComponent(id)}/redeploy`,
        Object.keys(changed).length === 0 ? {} : { variables: changed },
      );
      window.location.hash = `#/deployments/${next.id}`;
    } catch (e) {
      onError(isApiError(e) ? e.message : 'The redeploy did not reach the service.');
    }
  };
  return (
    <form class="stack-form" aria-label="Redeploy" onSubmit={(e) => void redeploy(e)}>
      <fieldset>
        <legend>Redeploy with the same configuration</legend>
        {Object.entries(variables).map(([name, value]) =>
          value === SECRET_MASK ? (
            <label>
              {name} <input name={`var-${name}`} type="password" autocomplete="off" placeholder="unchanged (secret)" />
            </label>
          ) : (
            <label>
              {name} <input name={`var-${name}`} defaultValue={value} />
            </label>
          ),
        )}
        <button type="submit">Redeploy now</button>
      </fieldset>
    </form>
  );
};
