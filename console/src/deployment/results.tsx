// The failed (or, for a cancelled deployment, stopped) commands of a deployment, each with its error, the tail of its
// stderr and its analysis (or "Analysis pending…" while one can still come).
import type { CommandResult, Detail } from './records.js';

export const Results = ({ detail, results }: { detail: Detail; results: readonly CommandResult[] }) => {
  // A command the deployment's cancel killed (exit 130/143) is not a failure to analyse: it is listed as cancelled,
  // and an analysis is awaited only for real failures of a deployment with analysis on (none is made for a cancel).
  const cancelledRun = detail.state === 'cancelled';
  const failures = results.filter((r) => r.status === 'failed' || r.analysis !== undefined);
  const awaitsAnalysis = (r: CommandResult) =>
    r.analysis === undefined && !cancelledRun && detail.analysis_enabled !== false;
  if (failures.length === 0) return null;
  return (
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
  );
};
