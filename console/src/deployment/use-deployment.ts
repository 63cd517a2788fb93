// The deployment page's data, live: the record from GET /deployments/{id}, then its events (live.ts: the viewer
// channel, or the /logs stream without one; in seq order, each once, resumed after the last on reconnect) moving its
// state, progress and steps and adding log lines, and the command results with their analysis, read when it ends
// and whenever an analysis arrives.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, isApiError } from '../api.js';
import { TERMINAL_STATES } from '../format.js';
import { watchDeployment, type LiveState } from '../live.js';
import type { CommandResult, Detail, Line, Step } from './records.js';

type Setter<T> = (update: (current: T) => T) => void;

interface Setters {
  readonly setDetail: Setter<Detail | undefined>;
  readonly setSteps: Setter<Map<string, Step>>;
  /** The log lines of the events being applied (added to the page's at once). */
  readonly lines: Line[];
}

const stepsOf = (d: Detail) => new Map((d.plan?.steps ?? []).map((s) => [s.id, s]));

/** One event of a running deployment's stream on the page's records (`ended` and `loadResults` are the caller's). */
const applyEvent = (event: string, data: Record<string, unknown>, seq: number, set: Setters, onEnd: () => void) => {
  if (event === 'log') {
    const log = data['log'] as { message?: string; target_name?: string; metadata?: { stream?: string } };
    const line: Line = {
      seq,
      text: String(log.message ?? ''),
      stream: log.metadata?.stream ?? 'stdout',
      target: String(log.target_name ?? ''),
    };
    set.lines.push(line);
  } else if (event === 'step_update') {
    set.setSteps((current) => {
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
    set.setDetail((current) =>
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
    set.setDetail((current) => (current === undefined ? current : { ...current, state: String(data['new_state']) }));
    if (TERMINAL_STATES.has(String(data['new_state']))) onEnd();
  }
};

export const useDeployment = (id: string) => {
  const [detail, setDetail] = useState<Detail | undefined>();
  const [steps, setSteps] = useState<Map<string, Step>>(new Map());
  const [lines, setLines] = useState<Line[]>([]);
  const [error, setError] = useState<string | undefined>();
  const [live, setLive] = useState<LiveState>('reconnecting');
  const [results, setResults] = useState<CommandResult[]>([]);
  const analysisEnabled = useRef(true);

  useEffect(() => {
    let stop: (() => void) | undefined;
    let cancelled = false;
    setDetail(undefined);
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
    // The record is the truth at the end: steps a cancel or a timeout closed have no step event.
    const onEnd = () => {
      void api<Detail>('GET', `/deployments/${encodeURIComponent(id)}`).then((d) => {
        if (cancelled) return;
        setDetail(d);
        setSteps(stepsOf(d));
      });
      loadResults();
    };
    api<Detail>('GET', `/deployments/${encodeURIComponent(id)}`)
      .then((d) => {
        if (cancelled) return;
        setDetail(d);
        analysisEnabled.current = d.analysis_enabled !== false;
        setSteps(stepsOf(d));
        // A deployment that had ended when the page loaded: its record is the truth, and the stream only replays its
        // history. Replayed state and step changes would move the page back through `running` (and unmount an open
        // redeploy form with what the user typed in it), so only its lines and the end are read from the stream.
        const ended = TERMINAL_STATES.has(d.state);
        stop = watchDeployment({
          deploymentId: id,
          onEvents: (events) => {
            if (cancelled) return; // this page moved on to another deployment
            const added: Line[] = [];
            for (const { id: seq, event, data } of events) {
              if (ended && event !== 'log') {
                if (event === 'state_change' && TERMINAL_STATES.has(String(data['new_state']))) loadResults();
                continue;
              }
              const analysis = event === 'log' ? (data['log'] as { analysis?: unknown }).analysis : undefined;
              if (analysis !== undefined && analysis !== null) loadResults();
              applyEvent(event, data, seq, { setDetail, setSteps, lines: added }, onEnd);
            }
            if (added.length > 0) setLines((current) => [...current, ...added]);
          },
          onState: setLive,
          onError: setError,
        });
      })
      .catch((e: unknown) => setError(isApiError(e) ? e.message : 'The service cannot be reached.'));
    return () => {
      cancelled = true;
      stop?.();
    };
  }, [id]);

  return { detail, steps, lines, results, live, error, setError };
};
