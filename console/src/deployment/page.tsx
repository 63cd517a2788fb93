// One deployment: its header with cancel / redeploy when the caller may, the redeploy form, its plan as a grid whose
// cells change state live, the failed commands with their analysis, and the log (search, follow, download).
// Everything comes from GET /deployments/{id} and its live events (use-deployment.ts).
import { useEffect, useState } from 'preact/hooks';
import { api, isApiError } from '../api.js';
import { nameOf } from '../deployments.js';
import { stateClass, TERMINAL_STATES, triggerer, when } from '../format.js';
import type { LiveState } from '../live.js';
import { ErrorLine, LiveBadge } from '../widgets.js';
import { LogView, useLogChoices } from './log-view.js';
import { PlanGrid } from './plan-grid.js';
import type { Detail } from './records.js';
import { RedeployForm } from './redeploy-form.js';
import { Results } from './results.js';
import { useDeployment } from './use-deployment.js';

/** The deployment's name, state, live badge and the buttons the caller may use. */
const Header = ({
  detail,
  live,
  permissions,
  redeploying,
  onCancel,
  onRedeploy,
}: {
  detail: Detail;
  live: LiveState;
  permissions: ReadonlySet<string>;
  redeploying: boolean;
  onCancel: () => void;
  onRedeploy: () => void;
}) => {
  const terminal = TERMINAL_STATES.has(detail.state);
  return (
    <header class="page-head">
      <h1 id="deployment-title">{nameOf(detail)}</h1>
      <span class={stateClass(detail.state)} data-testid="deployment-state">
        {detail.state}
      </span>
      <LiveBadge state={live} ended="Finished" />
      <span class="actions">
        {!terminal && permissions.has('deployments:cancel') ? (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
        {terminal && permissions.has('deployments:redeploy') ? (
          <button type="button" aria-expanded={redeploying} onClick={onRedeploy}>
            Redeploy
          </button>
        ) : null}
      </span>
    </header>
  );
};

/** Steps done, when and by whom, how it ended, and the progress bar. */
const Summary = ({ detail }: { detail: Detail }) => (
  <>
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
  </>
);

export const Deployment = ({ id, permissions }: { id: string; permissions: ReadonlySet<string> }) => {
  const { detail, steps, lines, results, live, error, setError } = useDeployment(id);
  const [redeploying, setRedeploying] = useState(false);
  const logChoices = useLogChoices();
  useEffect(() => setRedeploying(false), [id]);

  const cancel = async () => {
    const reason = window.prompt('Why cancel? (kept for audit; optional)') ?? undefined;
    try {
      await api('POST', `/deployments/${encodeURIComponent(id)}/cancel`, reason ? { reason } : {});
    } catch (e) {
      setError(isApiError(e) ? e.message : 'The cancel did not reach the service.');
    }
  };

  if (error !== undefined && detail === undefined)
    return (
      <p role="alert" class="error">
        {error}
      </p>
    );
  if (detail === undefined) return <p>Loading…</p>;
  return (
    <section aria-labelledby="deployment-title">
      <Header
        detail={detail}
        live={live}
        permissions={permissions}
        redeploying={redeploying}
        onCancel={() => void cancel()}
        onRedeploy={() => setRedeploying(!redeploying)}
      />
      <ErrorLine message={error} />
      {redeploying && TERMINAL_STATES.has(detail.state) ? (
        <RedeployForm id={id} variables={detail.config?.variables ?? {}} onError={setError} />
      ) : null}
      <Summary detail={detail} />
      <h2>Plan</h2>
      <PlanGrid steps={steps} />
      <Results detail={detail} results={results} />
      <LogView id={id} lines={lines} choices={logChoices} />
    </section>
  );
};
