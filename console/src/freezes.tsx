// Deployment freezes (#/freezes), within the caller's permissions: active now, upcoming and past, each with its
// window in local time with the zone and its scope by name (environment, tenant, solution; none is every
// deployment); create (freezes:create) with datetime-local inputs sent as ISO 8601 UTC; end an active freeze now
// (freezes:update: its end_time becomes now) and delete (freezes:delete, confirmed in the page). The API decides.
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { nameIn, useList } from './use-list.js';
import { when } from './format.js';
import { ConfirmButton, ErrorLine, NoticeLine, useChanges } from './widgets.js';

interface Freeze {
  readonly id: string;
  readonly name: string;
  readonly reason: string | null;
  readonly start_time: string;
  readonly end_time: string;
  readonly tenant_id: string | null;
  readonly solution_id: string | null;
  readonly environment_id: string | null;
  readonly active: boolean;
}

type Named = { id: string; name: string };

/** A date as a datetime-local input's value (local time, minutes). */
const localInput = (date: Date): string => {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
};

/** A datetime-local value (the reader's local time) as ISO 8601 UTC; undefined when empty or not a date. */
export const isoOfLocal = (value: string): string | undefined => {
  const date = new Date(value);
  return value === '' || Number.isNaN(date.getTime()) ? undefined : date.toISOString();
};

const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

const FreezeTable = ({
  title,
  id,
  rows,
  names,
  permissions,
  change,
}: {
  title: string;
  id: string;
  rows: readonly Freeze[];
  names: { environments?: Named[]; tenants?: Named[]; solutions?: Named[] };
  permissions: ReadonlySet<string>;
  change: (work: () => Promise<unknown>, done: string) => Promise<boolean>;
}) => {
  const scope = (f: Freeze) => {
    const parts = [
      f.environment_id === null ? undefined : `environment ${nameIn(names.environments, f.environment_id)}`,
      f.tenant_id === null ? undefined : `tenant ${nameIn(names.tenants, f.tenant_id)}`,
      f.solution_id === null ? undefined : `solution ${nameIn(names.solutions, f.solution_id)}`,
    ].filter((p) => p !== undefined);
    return parts.length === 0 ? 'Every deployment' : parts.join(', ');
  };
  const mayEnd = id === 'active' && permissions.has('freezes:update');
  const mayDelete = permissions.has('freezes:delete');
  return (
    <>
      <h2 id={`freezes-${id}`}>{title}</h2>
      {rows.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label={title}>
          <table class="list freezes whole-words" aria-labelledby={`freezes-${id}`}>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">From</th>
                <th scope="col">Until</th>
                <th scope="col">Applies to</th>
                <th scope="col">Reason</th>
                {mayEnd || mayDelete ? (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {rows.map((f) => (
                <tr key={f.id} data-freeze-id={f.id}>
                  <td>{f.name}</td>
                  <td>
                    <time dateTime={f.start_time}>{when(f.start_time)}</time>
                  </td>
                  <td>
                    <time dateTime={f.end_time}>{when(f.end_time)}</time>
                  </td>
                  <td>{scope(f)}</td>
                  <td>{f.reason ?? ''}</td>
                  {mayEnd || mayDelete ? (
                    <td class="row-actions">
                      {mayEnd ? (
                        <ConfirmButton
                          label="End now"
                          confirm="Confirm end"
                          what={`freeze ${f.name}`}
                          onConfirm={() =>
                            change(
                              () =>
                                api('PUT', `/deployment-freezes/${encodeURIComponent(f.id)}`, {
                                  end_time: new Date().toISOString(),
                                }),
                              `Freeze ${f.name} ended.`,
                            )
                          }
                        />
                      ) : null}{' '}
                      {mayDelete ? (
                        <ConfirmButton
                          label="Delete"
                          what={`freeze ${f.name}`}
                          onConfirm={() =>
                            change(
                              () => api('DELETE', `/deployment-freezes/${encodeURIComponent(f.id)}`),
                              `Freeze ${f.name} deleted.`,
                            )
                          }
                        />
                      ) : null}
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
};

/** A scope of a new freeze: one environment, tenant or solution, or all of them; nothing when the list is not readable. */
const select = (field: string, label: string, rows: Named[] | undefined, all: string) =>
  rows === undefined ? null : (
    <label>
      {label}{' '}
      <select name={field}>
        <option value="">{all}</option>
        {rows.map((r) => (
          <option key={r.id} value={r.id}>
            {r.name}
          </option>
        ))}
      </select>
    </label>
  );

/** One end of a new freeze's window, in the reader's local time with the zone named. */
const WindowInput = ({
  name,
  label,
  value,
  set,
}: {
  name: string;
  label: string;
  value: string;
  set: (value: string) => void;
}) => (
  <label>
    {label} ({ZONE}){' '}
    <input
      name={name}
      type="datetime-local"
      required
      value={value}
      onInput={(e) => set((e.target as HTMLInputElement).value)}
    />
  </label>
);

/** The window of a new freeze: its start and its end. */
const FreezeWindow = ({
  start,
  setStart,
  end,
  setEnd,
}: {
  start: string;
  setStart: (value: string) => void;
  end: string;
  setEnd: (value: string) => void;
}) => (
  <div class="inline-form">
    <WindowInput name="start" label="Starts" value={start} set={setStart} />
    <WindowInput name="end" label="Ends" value={end} set={setEnd} />
  </div>
);

export const Freezes = ({ permissions }: { permissions: ReadonlySet<string> }) => {
  const freezes = useList<Freeze>('/deployment-freezes');
  const environments = useList<Named>(permissions.has('environments:read') ? '/environments' : undefined);
  const tenants = useList<Named>(permissions.has('tenants:read') ? '/tenants' : undefined);
  const solutions = useList<Named>(permissions.has('solutions:read') ? '/solutions' : undefined);
  const { error, notice, setError, change } = useChanges(freezes.reload);
  const [start, setStart] = useState(() => localInput(new Date()));
  const [end, setEnd] = useState(() => localInput(new Date(Date.now() + 2 * 3600_000)));
  // A new key after a create gives a fresh form (reset() would empty the controlled time inputs).
  const [formKey, setFormKey] = useState(0);

  const now = Date.now();
  const all = freezes.rows ?? [];
  const active = all.filter((f) => f.active);
  const upcoming = all
    .filter((f) => !f.active && Date.parse(f.start_time) > now)
    .sort((a, b) => a.start_time.localeCompare(b.start_time));
  const past = all.filter((f) => !f.active && Date.parse(f.start_time) <= now);
  const names = { environments: environments.rows, tenants: tenants.rows, solutions: solutions.rows };

  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const startIso = isoOfLocal(start);
    const endIso = isoOfLocal(end);
    if (startIso === undefined || endIso === undefined) {
      setError('Give the start and the end of the freeze.');
      return;
    }
    const name = String(form.get('name')).trim();
    const reason = String(form.get('reason')).trim();
    const ref = (field: string) => {
      const value = String(form.get(field) ?? '');
      return value === '' ? {} : { [field]: value };
    };
    const done = await change(
      () =>
        api('POST', '/deployment-freezes', {
          name,
          ...(reason === '' ? {} : { reason }),
          start_time: startIso,
          end_time: endIso,
          ...ref('environment_id'),
          ...ref('tenant_id'),
          ...ref('solution_id'),
        }),
      `Freeze ${name} created.`,
    );
    if (done) {
      setStart(localInput(new Date()));
      setEnd(localInput(new Date(Date.now() + 2 * 3600_000)));
      setFormKey(formKey + 1);
    }
  };

  return (
    <section aria-labelledby="freezes-title">
      <h1 id="freezes-title">Freezes</h1>
      <p class="muted">
        While a freeze is in force, deployments it applies to do not start; an administrator may override it with a
        reason. Times are in your time zone ({ZONE}).
      </p>
      <ErrorLine message={freezes.error ?? error} />
      <NoticeLine message={notice} />
      <FreezeTable
        title="In force now"
        id="active"
        rows={active}
        names={names}
        permissions={permissions}
        change={change}
      />
      <FreezeTable
        title="Upcoming"
        id="upcoming"
        rows={upcoming}
        names={names}
        permissions={permissions}
        change={change}
      />
      {permissions.has('freezes:create') ? (
        <form key={formKey} class="stack-form" aria-label="New freeze" onSubmit={(e) => void create(e)}>
          <fieldset>
            <legend>New freeze</legend>
            <label>
              Name <input name="name" required placeholder="Release week" />
            </label>
            <label>
              Reason <input name="reason" />
            </label>
            <FreezeWindow start={start} setStart={setStart} end={end} setEnd={setEnd} />
            <p class="muted">Leave the scope at “all” to freeze every deployment.</p>
            {select('environment_id', 'Environment', environments.rows, 'All environments')}
            {select('tenant_id', 'Tenant', tenants.rows, 'All tenants')}
            {select('solution_id', 'Solution', solutions.rows, 'All solutions')}
            <button type="submit">Create freeze</button>
          </fieldset>
        </form>
      ) : null}
      <FreezeTable title="Past" id="past" rows={past} names={names} permissions={permissions} change={change} />
    </section>
  );
};
