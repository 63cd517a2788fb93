// Small pieces every page uses: a live view's badge, error and notice lines, a destructive action confirmed in the
// page, changes on an admin list, and the records of a resource stream.
import { useEffect, useRef, useState } from 'preact/hooks';
import { errorText } from './api.js';
import { watchResources, type LiveState } from './live.js';

const BADGE: Record<Exclude<LiveState, 'closed'>, string> = {
  open: 'Live',
  reconnecting: 'Connecting…',
  paused: 'Paused while the tab is hidden',
  revoked: 'Session ended: not live',
};

/** Whether the view is live; a revoked session says so and offers the sign-in (a reload) instead of reconnecting. */
export const LiveBadge = ({ state, ended = 'Not live' }: { state: LiveState; ended?: string }) => (
  <>
    <span class={`live ${state}`} role="status">
      {state === 'closed' ? ended : BADGE[state]}
    </span>
    {state === 'revoked' ? (
      <button type="button" onClick={() => window.location.reload()}>
        Sign in again
      </button>
    ) : null}
  </>
);

export const ErrorLine = ({ message }: { message: string | undefined }) =>
  message === undefined ? null : (
    <p role="alert" class="error">
      {message}
    </p>
  );

/** What a change did, said politely to a screen reader. */
export const NoticeLine = ({ message }: { message: string | undefined }) =>
  message === undefined ? null : (
    <p role="status" class="notice">
      {message}
    </p>
  );

/**
 * Changes through the API on an administration list: `change(work, done)` clears the last message, runs the work,
 * shows the API's message on failure or `done` on success, and reads the list again either way.
 */
export const useChanges = (load: () => Promise<unknown>) => {
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const change = async (work: () => Promise<unknown>, done: string): Promise<boolean> => {
    setError(undefined);
    setNotice(undefined);
    try {
      await work();
    } catch (e) {
      setError(errorText(e));
      await load();
      return false;
    }
    setNotice(done);
    await load();
    return true;
  };
  return { error, notice, setError, change };
};

/**
 * The records of a resource list by id, live (live.ts): the snapshot, then each created, updated or deleted record;
 * after a reconnect the new snapshot replaces them.
 */
export const useResourceStream = <T extends { id: string }>(
  resource: 'pending_deployments' | 'targets',
): [ReadonlyMap<string, T>, LiveState] => {
  const [records, setRecords] = useState<ReadonlyMap<string, T>>(new Map());
  const [state, setState] = useState<LiveState>('reconnecting');
  useEffect(
    () =>
      watchResources({
        resourceType: resource,
        snapshot: true,
        onChanges: (changes, reset) =>
          setRecords((current) => {
            const next = new Map(reset ? [] : current);
            for (const { event, data } of changes) {
              const record = data['record'] as T | undefined;
              if (record === undefined) continue;
              if (event === 'deleted') next.delete(record.id);
              else next.set(record.id, record);
            }
            return next;
          }),
        onState: setState,
      }),
    [resource],
  );
  return [records, state];
};

/**
 * A delete, revoke or other destructive action that asks first, in the page (never `window.confirm`): the first
 * press shows `confirm` ("Confirm delete") and Cancel in its place, the focus on the confirmation (the keyboard path
 * is Enter, Enter); only that button runs `onConfirm`. `what` names the record for the accessible names.
 */
export const ConfirmButton = ({
  label,
  what,
  confirm = `Confirm ${label.toLowerCase()}`,
  onConfirm,
}: {
  label: string;
  what: string;
  confirm?: string;
  onConfirm: () => Promise<unknown>;
}) => {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
  }, [asking]);
  if (!asking)
    return (
      <button type="button" aria-label={`${label} ${what}`} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  return (
    <span class="confirm" role="group" aria-label={`${label} ${what}?`}>
      <button
        type="button"
        class="danger"
        ref={confirmRef}
        disabled={busy}
        aria-label={`${confirm} ${what}`}
        onClick={() => {
          setBusy(true);
          void onConfirm().finally(() => {
            setBusy(false);
            setAsking(false);
          });
        }}
      >
        {confirm}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
};
