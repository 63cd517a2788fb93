// The orchestration capacity (#/capacity, linked from the Queue): how many deployments may run at once, how many
// run now and which, how many requests wait. GET /admin/orchestration needs deployments:read; the change
// (PUT {instances}) is offered to admins, and the API refuses anyone else (a tenant's admin, for one), shown.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, type User } from './api.js';
import { ErrorLine, NoticeLine, useChanges } from './widgets.js';

interface Orchestration {
  readonly instances: number;
  readonly in_use: number;
  readonly available: number;
  readonly holders: readonly { instance_id: string; deployment_id: string }[];
  readonly pending: number;
}

/** What the capacity means now, in words. */
export const capacityText = (o: Orchestration): string =>
  o.instances === 0
    ? 'The capacity is 0: no deployment starts; every new one waits in the queue until the capacity is raised.'
    : `${o.instances} ${o.instances === 1 ? 'deployment' : 'deployments'} may run at once: ${o.in_use} running, ${o.available} free.`;

export const Capacity = ({ user }: { user: User }) => {
  const [orchestration, setOrchestration] = useState<Orchestration | undefined>();
  const [names, setNames] = useState<Record<string, string>>({});
  const [wanted, setWanted] = useState('');
  const load = async () => {
    const o = await api<Orchestration>('GET', '/admin/orchestration');
    setOrchestration(o);
    setWanted(String(o.instances));
    // The running deployments by what they deploy (at most the first 20).
    const found = await Promise.all(
      o.holders.slice(0, 20).map((h) =>
        api<{ id: string; solution_name?: string; sequence_name?: string; action_name?: string }>(
          'GET',
          `/deployments/${encodeURIComponent(h.deployment_id)}`,
        ).then(
          (d) => [h.deployment_id, d.solution_name ?? d.sequence_name ?? d.action_name ?? 'deployment'] as const,
          () => [h.deployment_id, 'deployment'] as const,
        ),
      ),
    );
    setNames(Object.fromEntries(found));
  };
  const { error, notice, setError, change } = useChanges(() => load().catch((e: unknown) => setError(errorText(e))));
  useEffect(() => {
    load().catch((e: unknown) => setError(errorText(e)));
  }, []);

  const save = async (event: SubmitEvent) => {
    event.preventDefault();
    const instances = Number(wanted);
    await change(
      () => api('PUT', '/admin/orchestration', { instances }),
      instances === 0 ? 'Capacity set to 0: new deployments wait in the queue.' : `Capacity set to ${instances}.`,
    );
  };

  return (
    <section aria-labelledby="capacity-title">
      <p>
        <a href="#/queue">Queue</a>
      </p>
      <h1 id="capacity-title">Capacity</h1>
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      {orchestration === undefined ? (
        <p>Loading…</p>
      ) : (
        <>
          <p data-testid="capacity-summary">{capacityText(orchestration)}</p>
          <p>
            {orchestration.pending === 0
              ? 'No request waits.'
              : `${orchestration.pending} ${orchestration.pending === 1 ? 'request waits' : 'requests wait'} in the `}
            {orchestration.pending === 0 ? null : <a href="#/queue">queue</a>}
          </p>
          {orchestration.holders.length === 0 ? null : (
            <>
              <h2>Running now</h2>
              <ul class="plain">
                {orchestration.holders.map((h) => (
                  <li key={h.instance_id}>
                    <a href={`#/deployments/${encodeURIComponent(h.deployment_id)}`}>
                      {names[h.deployment_id] ?? 'deployment'}
                    </a>{' '}
                    <span class="muted">on {h.instance_id}</span>
                  </li>
                ))}
              </ul>
            </>
          )}
        </>
      )}
      {user.roles.includes('admin') ? (
        <form class="inline-form" aria-label="Change the capacity" onSubmit={(e) => void save(e)}>
          <label>
            Deployments that may run at once{' '}
            <input
              type="number"
              name="instances"
              min={0}
              max={1000}
              step={1}
              required
              value={wanted}
              aria-describedby="capacity-zero"
              onInput={(e) => setWanted((e.target as HTMLInputElement).value)}
            />
          </label>
          <button type="submit">Set capacity</button>
          <p id="capacity-zero" class="muted">
            0 pauses starting: every new deployment waits in the queue until the capacity is raised. Lowering the
            capacity stops nothing that runs; raising it starts waiting requests at once, most urgent first.
          </p>
        </form>
      ) : null}
    </section>
  );
};
