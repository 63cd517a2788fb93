// A deployment's plan as a grid: a row per target, a cell per step, each cell with its live state, exit code and
// duration.
import { useMemo } from 'preact/hooks';
import { duration, stateClass } from '../format.js';
import type { Step } from './records.js';

export const PlanGrid = ({ steps }: { steps: ReadonlyMap<string, Step> }) => {
  const byTarget = useMemo(() => {
    const rows = new Map<string, Step[]>();
    for (const step of steps.values()) rows.set(step.target_name, [...(rows.get(step.target_name) ?? []), step]);
    return [...rows];
  }, [steps]);
  return (
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
  );
};
