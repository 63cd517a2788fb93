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

/** Who resolves a source: the caller, and the deployment's tenant the source must be usable by. */
interface SourceContext {
  readonly deps: PlanDeps;
  readonly caller: Caller;
  readonly tenantId: string | null;
  readonly problems: FieldProblem[];
}

/** A catalog record the deployment may use: visible to the caller, and global or of the deployment's tenant. */
const usable = <R extends { readonly tenantId: string | null; readonly name?: string }>(
  { caller, tenantId, problems }: SourceContext,
  record: R | undefined,
  field: string,
  what: string,
  id: string,
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

const ref = (record: { id: string; name: string; version: string }): SourceRef => ({
  id: record.id,
  name: record.name,
  version: record.version,
});

/** The resolved source of a kind: its ref in its own field, the others null. */
const sourceOf = (sourceType: SourceType, source: SourceRef, actions: readonly PlannedAction[]): ResolvedSource => ({
  sourceType,
  field: `${sourceType}_id`,
  solution: sourceType === 'solution' ? source : null,
  sequence: sourceType === 'sequence' ? source : null,
  action: sourceType === 'action' ? source : null,
  actions,
});

/** A solution: each of its sequences, in the solution's order, expanded to its steps. */
const solutionSource = async (at: SourceContext, id: string): Promise<ResolvedSource | undefined> => {
  const { deps, problems } = at;
  const solution = usable<Solution>(at, await findSolution(deps.solutions, id), 'solution_id', 'Solution', id);
  if (solution === undefined) return undefined;
  const actions: PlannedAction[] = [];
  for (const entry of solution.sequences) {
    const sequence = await findSequence(deps.sequences, entry.sequenceId);
    if (sequence === undefined)
      problems.push(problem('solution_id', `Sequence ${entry.order} of solution '${solution.name}' no longer exists.`));
    else actions.push(...(await expandSequence(deps, sequence, entry.order, 'solution_id', problems)));
  }
  return sourceOf('solution', ref(solution), actions);
};

/** A sequence: its steps, in order. */
const sequenceSource = async (at: SourceContext, id: string): Promise<ResolvedSource | undefined> => {
  const { deps, problems } = at;
  const sequence = usable<Sequence>(at, await findSequence(deps.sequences, id), 'sequence_id', 'Sequence', id);
  if (sequence === undefined) return undefined;
  return sourceOf('sequence', ref(sequence), await expandSequence(deps, sequence, 1, 'sequence_id', problems));
};

/** An action: the newest version satisfying the body's version_requirement (latest when none). */
const actionSource = async (
  at: SourceContext,
  id: string,
  requirement: string | null,
): Promise<ResolvedSource | undefined> => {
  const found = await findActionWithVersions(at.deps.actions, id);
  const action = usable(at, found?.action, 'action_id', 'Action', id);
  if (found === undefined || action === undefined) return undefined;
  const version = pickVersion(found.versions, requirement);
  if (version === undefined) {
    at.problems.push(
      requirement !== null && !isVersionRange(requirement)
        ? problem('version_requirement', `'${requirement}' is not a version range (such as ^1.2, ~1.4.0 or 1.2.3).`)
        : problem(
            'version_requirement',
            `No version of action '${action.name}' satisfies '${requirement ?? ''}' (latest is ${action.latestVersion}).`,
          ),
    );
    return undefined;
  }
  return sourceOf('action', { id: action.id, name: action.name, version: version.version }, [
    { sequence: null, order: 1, action, version },
  ]);
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
  const at: SourceContext = { deps, caller, tenantId, problems };
  let resolved: ResolvedSource | undefined;
  if (command.solution_id != null) resolved = await solutionSource(at, command.solution_id);
  else if (command.sequence_id != null) resolved = await sequenceSource(at, command.sequence_id);
  else if (command.action_id != null)
    resolved = await actionSource(at, command.action_id, command.version_requirement ?? null);
  else
    problems.push(
      ...['solution_id', 'sequence_id', 'action_id'].map((field) =>
        problem(field, 'Give exactly one of solution_id, sequence_id and action_id.'),
      ),
    );
  return problems.length > before ? undefined : resolved;
};
