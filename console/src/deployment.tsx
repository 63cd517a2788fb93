// One deployment: its plan as a grid (a row per target, a cell per step) whose cells change state live, the log
// stream (resumed after the last event on reconnect), search, follow, download, and cancel / redeploy when the
// caller may. Everything comes from GET /deployments/{id} and its /logs stream.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, isApiError } from './api.js';
import { Ansi } from './ansi.js';
import { nameOf, type DeploymentRow } from './deployments.js';
import { duration, stateClass, TERMINAL_STATES, triggerer, when } from './format.js';
import { openStream, type StreamState } from './stream.js';
import { ErrorLine, LiveBadge } from './widgets.js';

const SECRET_MASK = '***';

interface Step {
  readonly id: string;
  readonly target_id: string;
  readonly target_name: string;
  readonly action_name: string;
  readonly action_version: string;
  readonly state: string;
  readonly exit_code: number | null;
  readonly error_message: string | null;
  readonly duration_ms: number | null;
}

interface Detail extends DeploymentRow {
  readonly analysis_enabled?: boolean;
  readonly config?: { variables: Record<string, string> };
  readonly error_message: string | null;
  readonly cancel_reason?: string;
  readonly plan: { steps: Step[]; warnings?: string[] } | null;
}

interface CommandResult {
  readonly id: string;
  readonly target_name?: string;
  readonly action_name?: string;
  readonly status: string;
  readonly exit_code?: number;
  readonly stderr_tail?: string;
  readonly error_message?: string;
  readonly analysis?: { summary: string; likely_cause: string; remediation: string[]; confidence: number };
}

interface Line {
  readonly seq: number;
  readonly text: string;
  readonly stream: string;
  readonly target: string;
}

export const Deployment = ({ id, permissions }: { id: string; permissions: ReadonlySet<string> }) => {
  const [detail, setDetail] = useState<Detail | undefined>();
  const [steps, setSteps] = useState<Map<string, Step>>(new Map());
  const [lines, setLines] = useState<Line[]>([]);
  const [error, setError] = useState<string | undefined>();
  const [live, setLive] = useState<StreamState>('reconnecting');
  const [follow, setFollow] = useState(true);
  const [search, setSearch] = useState('');
  const [results, setResults] = useState<CommandResult[]>([]);
  const [redeploying, setRedeploying] = useState(false);
  const logEnd = useRef<HTMLDivElement>(null);
  const analysisEnabled = useRef(true);

  useEffect(() => {
    let stream: { close(): void } | undefined;
    let cancelled = false;
    setDetail(undefined);
    setRedeploying(false);
    setLines([]);
    setResults([]);
    // Command results with their analysis: read when the deployment ends and whenever an analysis arrives live.
    // The stream closes with the deployment, and an analysis usually lands a few seconds later: while a failed
    // command has none yet, it is read again every 2 s for up to a minute.
    let analysisWaits = 0;
    const loadResults = () =>
      void api<CommandResult[]>('GET', `/deployments/${encodeURIComponent(id)}/analysis`).then(
        (r) => {
          if (cancelled) return;
          setResults(r);
          // Only while an analysis can come: none is made when the deployment has analysis switched off.
          const waiting = r.some((c) => c.status === 'failed' && c.analysis === undefined);
          if (waiting && analysisEnabled.current && analysisWaits < 30) {
            analysisWaits += 1;
            setTimeout(loadResults, 2000);
          }
        },
        () => undefined,
      );
    api<Detail>('GET', `/deployments/${encodeURIComponent(id)}`)
      .then((d) => {
        if (cancelled) return;
        setDetail(d);
        analysisEnabled.current = d.analysis_enabled !== false;
        setSteps(new Map((d.plan?.steps ?? []).map((s) => [s.id, s])));
        let seq = 0;
        // A deployment that had ended when the page loaded: its record is the truth, and the stream only replays its
        // history. Replayed state and step changes would move the page back through `running` (and unmount an open
        // redeploy form with what the user typed in it), so only its lines and the end are read from the stream.
        const ended = TERMINAL_STATES.has(d.state);
        stream = openStream(
          `/deployments/${encodeURIComponent(id)}/logs`,
          ({ event, data }) => {
            if (cancelled) return; // this page moved on to another deployment
            if (ended && event !== 'log') {
              if (event === 'state_change' && TERMINAL_STATES.has(String(data['new_state']))) loadResults();
              return;
            }
            seq += 1;
            if (event === 'log') {
              const log = data['log'] as {
                message?: string;
                target_name?: string;
                metadata?: { stream?: string };
                analysis?: unknown;
              };
              if (log.analysis !== undefined && log.analysis !== null) loadResults();
              const line: Line = {
                seq,
                text: String(log.message ?? ''),
                stream: log.metadata?.stream ?? 'stdout',
                target: String(log.target_name ?? ''),
              };
              setLines((current) => [...current, line]);
            } else if (event === 'step_update') {
              setSteps((current) => {
                const step = current.get(String(data['step_id']));
                if (step === undefined) return current;
                const next = new Map(current);
                next.set(step.id, {
                  ...step,
                  state: String(data['state']),
                  exit_code: (data['exit_code'] as number | null) ?? null,
                  error_message: (data['error_message'] as string | null) ?? null,
                });
                return next;
              });
            } else if (event === 'progress') {
              setDetail((current) =>
                current === undefined
                  ? current
                  : {
                      ...current,
                      progress: Number(data['progress']),
                      completed_steps: Number(data['completed_steps']),
                      total_steps: Number(data['total_steps']),
                    },
              );
            } else if (event === 'state_change') {
              setDetail((current) =>
                current === undefined ? current : { ...current, state: String(data['new_state']) },
              );
              if (TERMINAL_STATES.has(String(data['new_state']))) {
                // The record is the truth at the end: steps a cancel or a timeout closed have no step event.
                void api<Detail>('GET', `/deployments/${encodeURIComponent(id)}`).then((d) => {
                  if (cancelled) return;
                  setDetail(d);
                  setSteps(new Map((d.plan?.steps ?? []).map((s) => [s.id, s])));
                });
                loadResults();
              }
            }
          },
          { resume: true, onState: setLive },
        );
      })
      .catch((e: unknown) => setError(isApiError(e) ? e.message : 'The service cannot be reached.'));
    return () => {
      cancelled = true;
      stream?.close();
    };
  }, [id]);

  useEffect(() => {
    if (follow) logEnd.current?.scrollIntoView({ block: 'end' });
  }, [lines, follow]);

  const byTarget = useMemo(() => {
    const rows = new Map<string, Step[]>();
    for (const step of steps.values()) rows.set(step.target_name, [...(rows.get(step.target_name) ?? []), step]);
    return [...rows];
  }, [steps]);

  // A command the deployment's cancel killed (exit 130/143) is not a failure to analyse: it is listed as cancelled,
  // and an analysis is awaited only for real failures of a deployment with analysis on (none is made for a cancel).
  const cancelledRun = detail?.state === 'cancelled';
  const failures = results.filter((r) => r.status === 'failed' || r.analysis !== undefined);
  const awaitsAnalysis = (r: CommandResult) =>
    r.analysis === undefined && !cancelledRun && detail?.analysis_enabled !== false;
  const shown = search === '' ? lines : lines.filter((l) => l.text.toLowerCase().includes(search.toLowerCase()));

  const cancel = async () => {
    const reason = window.prompt('Why cancel? (kept for audit; optional)') ?? undefined;
    try {
      await api('POST', `/deployments/${encodeURIComponent(id)}/cancel`, reason ? { reason } : {});
    } catch (e) {
      setError(isApiError(e) ? e.message : 'The cancel did not reach the service.');
    }
  };
  const redeploy = async (event: SubmitEvent) => {
    event.preventDefault();
    // Only what was changed is sent (the API merges it over the original); a secret left empty keeps its value,
    // which the console never saw: the API shows secrets as ***.
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const original = detail?.config?.variables ?? {};
    const variables = Object.fromEntries(
      Object.entries(original).flatMap(([name, value]) => {
        const given = String(form.get(`var-${name}`) ?? '');
        const secret = value === SECRET_MASK;
        return (secret && given !== '') || (!secret && given !== value) ? [[name, given]] : [];
      }),
    );
    try {
      const next = await api<{ id: string }>(
        'POST',
        `/deployments/${encodeURIComponent(id)}/redeploy`,
        Object.keys(variables).length === 0 ? {} : { variables },
      );
      window.location.hash = `#/deployments/${next.id}`;
    } catch (e) {
      setError(isApiError(e) ? e.message : 'The redeploy did not reach the service.');
    }
  };
  const download = () => {
    const text = lines.map((l) => `[${l.target}] ${l.text}`).join('\n');
    const link = document.createElement('a');
    link.href = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    link.download = `deployment-${id}.log`;
    link.click();
    URL.revokeObjectURL(link.href);
  };

  if (error !== undefined && detail === undefined)
    return (
      <p role="alert" class="error">
        {error}
      </p>
    );
  if (detail === undefined) return <p>Loading…</p>;
  const terminal = TERMINAL_STATES.has(detail.state);
  return (
    <section aria-labelledby="deployment-title">
      <header class="page-head">
        <h1 id="deployment-title">{nameOf(detail)}</h1>
        <span class={stateClass(detail.state)} data-testid="deployment-state">
          {detail.state}
        </span>
        <LiveBadge state={live} ended="Finished" />
        <span class="actions">
          {!terminal && permissions.has('deployments:cancel') ? (
            <button type="button" onClick={() => void cancel()}>
              Cancel
            </button>
          ) : null}
          {terminal && permissions.has('deployments:redeploy') ? (
            <button type="button" aria-expanded={redeploying} onClick={() => setRedeploying(!redeploying)}>
              Redeploy
            </button>
          ) : null}
        </span>
      </header>
      <ErrorLine message={error} />
      {redeploying && terminal ? (
        <form class="stack-form" aria-label="Redeploy" onSubmit={(e) => void redeploy(e)}>
          <fieldset>
            <legend>Redeploy with the same configuration</legend>
            {Object.entries(detail.config?.variables ?? {}).map(([name, value]) =>
              value === SECRET_MASK ? (
                <label>
                  {name}{' '}
                  <input name={`var-${name}`} type="password" autocomplete="off" placeholder="unchanged (secret)" />
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
      ) : null}
      <p class="muted">
        {detail.completed_steps}/{detail.total_steps} steps · created {when(detail.created_at)} · by{' '}
        <span title={detail.triggered_by ?? undefined}>{triggerer(detail)}</span>
        {detail.error_message ? <> · {detail.error_message}</> : null}
        {detail.cancel_reason && !(detail.error_message ?? '').includes(detail.cancel_reason) ? (
          <> · cancelled: {detail.cancel_reason}</>
        ) : null}
      </p>
      {/* Steps done over steps in all: a failed 0/2 deployment shows an empty bar, not a full one. */}
      <progress
        max={Math.max(detail.total_steps, 1)}
        value={detail.completed_steps}
        aria-label={`Progress: ${detail.completed_steps} of ${detail.total_steps} steps done`}
      />
      <h2>Plan</h2>
      <table class="grid">
        <caption class="visually-hidden">Steps per target</caption>
        <tbody>
          {byTarget.map(([target, row]) => (
            <tr>
              <th scope="row">{target}</th>
              {row.map((step) => (
                <td
                  data-step-id={step.id}
                  data-state={step.state}
                  class={stateClass(step.state)}
                  title={step.error_message ?? ''}
                >
                  {step.action_name} {step.action_version}
                  <br />
                  <small>
                    {step.state}
                    {step.exit_code === null ? '' : ` · exit ${step.exit_code}`}
                    {step.duration_ms === null ? '' : ` · ${duration(step.duration_ms)}`}
                  </small>
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {failures.length > 0 ? (
        <>
          <h2>{cancelledRun ? 'Stopped commands' : 'Failures'}</h2>
          {failures.map((r) => (
            <article class="result" data-result-id={r.id} key={r.id}>
              <h3>
                {r.action_name} on {r.target_name}: {cancelledRun && r.analysis === undefined ? 'cancelled' : r.status}
                {r.exit_code === undefined ? '' : ` (exit ${r.exit_code})`}
              </h3>
              {r.error_message ? <p>{r.error_message}</p> : null}
              {r.stderr_tail ? <pre class="command">{r.stderr_tail}</pre> : null}
              {r.analysis === undefined ? (
                awaitsAnalysis(r) ? (
                  <p class="muted">Analysis pending…</p>
                ) : null
              ) : (
                <div class="analysis">
                  <p>
                    <strong>{r.analysis.summary}</strong>{' '}
                    <span class="muted">({Math.round(r.analysis.confidence * 100)} % confident)</span>
                  </p>
                  <p>Likely cause: {r.analysis.likely_cause}</p>
                  <ul>
                    {r.analysis.remediation.map((step) => (
                      <li>{step}</li>
                    ))}
                  </ul>
                </div>
              )}
            </article>
          ))}
        </>
      ) : null}
      <h2>Log</h2>
      <div class="log-tools">
        <label>
          Search <input type="search" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          <input type="checkbox" checked={follow} onChange={(e) => setFollow((e.target as HTMLInputElement).checked)} />{' '}
          Follow
        </label>
        <button type="button" onClick={download}>
          Download
        </button>
      </div>
      <div class="log" role="log" aria-live="polite" aria-label="Deployment log">
        {shown.map((l) => (
          <div class={`line ${l.stream}`} key={l.seq}>
            <span class="target">{l.target}</span> <Ansi text={l.text} />
          </div>
        ))}
        <div ref={logEnd} />
      </div>
    </section>
  );
};
