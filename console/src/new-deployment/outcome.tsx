// What the new-deployment form answers: the API's refusal (a freeze with its reason and, for admins, the override
// with its reason field), and the preview (plan, warnings, target health) with its Create button.
import type { ApiError } from '../api.js';
import { when } from '../format.js';

interface FrozenDetails {
  readonly active_freezes?: { id: string; name: string; ends_at: string }[];
  readonly can_override?: boolean;
}

export interface Preview {
  readonly plan: { steps: { id: string; target_name: string; action_name: string; action_version: string }[] };
  readonly warnings: string[];
  readonly target_summary: { total: number; online: number; offline: number; stale: number };
  readonly source_name: string;
  readonly source_version: string | null;
}

/** `1 target`, `2 targets`. */
const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The override's reason is the page's: it outlives the alert between two tries. */
export interface Override {
  readonly reason: string;
  readonly setReason: (reason: string) => void;
  readonly submit: () => void;
}

const FreezeOverride = ({ override }: { override: Override }) => (
  <form
    class="inline-form"
    onSubmit={(e) => {
      e.preventDefault();
      override.submit();
    }}
  >
    <label>
      Reason to override the freeze{' '}
      <input
        required
        value={override.reason}
        onInput={(e) => override.setReason((e.target as HTMLInputElement).value)}
      />
    </label>
    <button type="submit">Override the freeze and create</button>
  </form>
);

export const Refusal = ({ error, override }: { error: ApiError; override: Override }) => {
  const frozen = error.code === 'DEPLOYMENT_FROZEN' ? ((error.details ?? {}) as FrozenDetails) : undefined;
  return (
    <div role="alert" class="error">
      {frozen === undefined ? (
        <p>{error.message}</p>
      ) : (
        <>
          <p>Deployments are frozen:</p>
          <ul>
            {(frozen.active_freezes ?? []).map((f) => (
              <li key={f.id}>
                {f.name}, until <time dateTime={f.ends_at}>{when(f.ends_at)}</time>
              </li>
            ))}
          </ul>
          {frozen.can_override === true ? null : <p>Wait until it ends, or ask an administrator to override it.</p>}
        </>
      )}
      {frozen?.can_override === true ? <FreezeOverride override={override} /> : null}
    </div>
  );
};

export const PreviewPanel = ({
  preview,
  busy,
  onCreate,
}: {
  preview: Preview;
  busy: boolean;
  onCreate: () => void;
}) => (
  <section aria-labelledby="preview-title" class="preview">
    <h2 id="preview-title">
      Preview: {preview.source_name} {preview.source_version ?? ''}
    </h2>
    <p data-testid="target-summary">
      {count(preview.target_summary.total, 'target')}: {preview.target_summary.online} online,{' '}
      {preview.target_summary.stale} stale, {preview.target_summary.offline} offline
    </p>
    {preview.warnings.length === 0 ? null : (
      <ul class="warnings">
        {preview.warnings.map((w) => (
          <li>{w}</li>
        ))}
      </ul>
    )}
    <ol>
      {preview.plan.steps.map((s) => (
        <li key={s.id}>
          {s.action_name} {s.action_version} on {s.target_name}
        </li>
      ))}
    </ol>
    <button type="button" disabled={busy} onClick={onCreate}>
      Create deployment
    </button>
  </section>
);
