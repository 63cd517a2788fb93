// Step 2 of a plan, the source: the solution, sequence or action, visible and usable by the deployment's tenant; a
// solution expands to its sequences, a sequence to its steps, in their order; each action runs the newest version
// satisfying its requirement (the step's, or the body's version_requirement for an action source; latest when none).
import {
  findActionWithVersions,
  findSequence,
  findSolution,
  isVersionRange,
  isVisibleTo,
  pickVersion,
} from '../../catalog/resolve.js';
import type { ActionVersion, ActionWithVersions, Sequence, Solution } from '../../catalog/types.js';
import type { FieldProblem } from '../../errors.js';
import type { Caller } from '../../identity/types.js';
import type { SourceRef, SourceType } from '../types.js';
import type { CreateDeploymentCommand, PlanDeps } from './command.js';
import { problem } from './problems.js';

/** One action of the plan, in its sequence (null for an action source). */
export interface PlannedAction {
  readonly sequence: { readonly id: string; readonly name: string; readonly order: number } | null;
  readonly order: number;
  readonly action: ActionWithVersions['action'];
  readonly version: ActionVersion;
}

export interface ResolvedSource {
  readonly sourceType: SourceType;
  readonly field: 'solution_id' | 'sequence_id' | 'action_id';
  readonly solution: SourceRef | null;
  readonly sequence: SourceRef | null;
  readonly action: SourceRef | null;
  /** In plan order: sequences in the solution's order, actions in the sequence's. */
  readonly actions: readonly PlannedAction[];
}

/** A catalog record the deployment may use: visible to the caller, and global or of the deployment's tenant. */
const usable = <R extends { readonly tenantId: string | null; readonly name?: string }>(
  record: R | undefined,
  caller: Caller,
  tenantId: string | null,
  field: string,
  what: string,
  id: string,
  problems: FieldProblem[],
): R | undefined => {
  if (record === undefined || !isVisibleTo(caller.tenantId, record)) {
    problems.push(problem(field, `${what} '${id}' does not exist.`));
    return undefined;
  }
  if (record.tenantId !== null && record.tenantId !== tenantId) {
    problems.push(
      problem(
        field,
        tenantId === null
          ? `${what} '${record.name ?? id}' belongs to a tenant: deploy it with that tenant's tenant_id and environment_id.`
          : `${what} '${record.name ?? id}' belongs to another tenant than the deployment.`,
      ),
    );
    return undefined;
  }
  return record;
};

/** The steps of a sequence, each with its action and chosen version; a problem on `field` per step that fails. */
const expandSequence = async (
  deps: PlanDeps,
  sequence: Sequence,
  order: number,
  field: string,
  problems: FieldProblem[],
): Promise<PlannedAction[]> => {
  const planned: PlannedAction[] = [];
  for (const step of sequence.steps) {
    const found = await findActionWithVersions(deps.actions, step.actionId);
    if (found === undefined) {
      problems.push(
        problem(field, `Step ${step.order} of sequence '${sequence.name}' uses an action that no longer exists.`),
      );
      continue;
    }
    const version = pickVersion(found.versions, step.versionRequirement);
    if (version === undefined) {
      problems.push(
        problem(
          field,
          `Step ${step.order} of sequence '${sequence.name}': no version of action '${found.action.name}' satisfies '${step.versionRequirement ?? ''}'.`,
        ),
      );
      continue;
    }
    planned.push({
      sequence: { id: sequence.id, name: sequence.name, order },
      order: step.order,
      action: found.action,
      version,
    });
  }
  return planned;
};

/** The source, or undefined with the reasons added to `problems`. */
export const resolveSource = async (
  deps: PlanDeps,
  caller: Caller,
  tenantId: string | null,
  command: CreateDeploymentCommand,
  problems: FieldProblem[],
): Promise<ResolvedSource | undefined> => {
  const before = problems.length;
  const ref = (record: { id: string; name: string; version: string }): SourceRef => ({
    id: record.id,
    name: record.name,
    version: record.version,
  });
  let resolved: ResolvedSource | undefined;

  if (command.solution_id != null) {
    const id = command.solution_id;
    const solution = usable<Solution>(
      await findSolution(deps.solutions, id),
      caller,
      tenantId,
      'solution_id',
      'Solution',
      id,
      problems,
    );
    if (solution !== undefined) {
      const actions: PlannedAction[] = [];
      for (const entry of solution.sequences) {
        const sequence = await findSequence(deps.sequences, entry.sequenceId);
        if (sequence === undefined)
          problems.push(
            problem('solution_id', `Sequence ${entry.order} of solution '${solution.name}' no longer exists.`),
          );
        else actions.push(...(await expandSequence(deps, sequence, entry.order, 'solution_id', problems)));
      }
      resolved = {
        sourceType: 'solution',
        field: 'solution_id',
        solution: ref(solution),
        sequence: null,
        action: null,
        actions,
      };
    }
  } else if (command.sequence_id != null) {
    const id = command.sequence_id;
    const sequence = usable<Sequence>(
      await findSequence(deps.sequences, id),
      caller,
      tenantId,
      'sequence_id',
      'Sequence',
      id,
      problems,
    );
    if (sequence !== undefined) {
      const actions = await expandSequence(deps, sequence, 1, 'sequence_id', problems);
      resolved = {
        sourceType: 'sequence',
        field: 'sequence_id',
        solution: null,
        sequence: ref(sequence),
        action: null,
        actions,
      };
    }
  } else if (command.action_id != null) {
    const id = command.action_id;
    const found = await findActionWithVersions(deps.actions, id);
    const action = usable(found?.action, caller, tenantId, 'action_id', 'Action', id, problems);
    if (found !== undefined && action !== undefined) {
      const requirement = command.version_requirement ?? null;
      const version = pickVersion(found.versions, requirement);
      if (version === undefined) {
        problems.push(
          requirement !== null && !isVersionRange(requirement)
            ? problem('version_requirement', `'${requirement}' is not a version range (such as ^1.2, ~1.4.0 or 1.2.3).`)
            : problem(
                'version_requirement',
                `No version of action '${action.name}' satisfies '${requirement ?? ''}' (latest is ${action.latestVersion}).`,
              ),
        );
      } else {
        resolved = {
          sourceType: 'action',
          field: 'action_id',
          solution: null,
          sequence: null,
          action: { id: action.id, name: action.name, version: version.version },
          actions: [{ sequence: null, order: 1, action, version }],
        };
      }
    }
  } else {
    problems.push(
      ...['solution_id', 'sequence_id', 'action_id'].map((field) =>
        problem(field, 'Give exactly one of solution_id, sequence_id and action_id.'),
      ),
    );
  }
  return problems.length > before ? undefined : resolved;
};
