// Sequences: ordered steps, each an action and a version requirement. Every step names an action the sequence
// may use (global, or of the sequence's own tenant; a global sequence uses only global actions) and a
// requirement at least one of its versions satisfies (none: the latest). A sequence cannot be deleted while a
// solution uses it (409). Steps keep the order given (`order` on every step, 1..n) or their array positions.
import { ConflictError, ValidationError, type FieldProblem } from '../errors.js';
import type { Caller } from '../identity/types.js';
import type { PageRequest } from '../shared/pagination.js';
import {
  assertCanChange,
  findVisible as findVisibleRecord,
  listPage,
  mayUse,
  newRecord,
  ordersOf,
  ownerTenant,
  retrying,
  revisedRecord,
  type CatalogDeps,
} from './deps.js';
import type { ReferenceChange } from './ports.js';
import { findActionWithVersions, isVersionRange, normalizeVersion, pickVersion } from './resolve.js';
import type { Sequence, SequenceStep } from './types.js';
import { sequenceView } from './views.js';

export const MAX_STEPS = 40;

export interface StepInput {
  readonly order?: number | undefined;
  readonly action_id: string;
  readonly version_requirement?: string | null | undefined;
}

export interface CreateSequenceCommand {
  readonly name: string;
  readonly description?: string | null | undefined;
  readonly version?: string | undefined;
  readonly tenant_id?: string | null | undefined;
  readonly steps: readonly StepInput[];
}

/** The given fields replace the sequence's; `steps` replaces every step. The tenant is fixed at creation. */
export interface UpdateSequenceCommand {
  readonly name?: string | undefined;
  readonly description?: string | null | undefined;
  readonly version?: string | undefined;
  readonly steps?: readonly StepInput[] | undefined;
}

export interface ListSequencesQuery extends PageRequest {
  readonly tenant_id?: string | undefined;
}

/** A record's own semantic version (sequences, solutions): 1.0.0 when not given. */
export const recordVersion = (text: string | undefined): string => {
  if (text === undefined) return '1.0.0';
  const version = normalizeVersion(text);
  if (version === undefined)
    throw ValidationError.field('version', `'${text}' is not a semantic version (for example 1.0.0).`);
  return version;
};

interface ResolvedSteps {
  readonly steps: SequenceStep[];
  /** Revision of each distinct action the steps use, as validated. */
  readonly revisions: ReadonlyMap<string, number>;
}

/** Steps -> stored steps (action UUIDs, sorted by order), or a ValidationError naming each bad field. */
const resolveSteps = async (
  deps: CatalogDeps,
  owner: string | null,
  inputs: readonly StepInput[],
): Promise<ResolvedSteps> => {
  if (inputs.length === 0) throw ValidationError.field('steps', 'A sequence needs at least one step.');
  if (inputs.length > MAX_STEPS) throw ValidationError.field('steps', `A sequence has at most ${MAX_STEPS} steps.`);
  const orders = ordersOf(inputs, 'steps');
  const problems: FieldProblem[] = [];
  const revisions = new Map<string, number>();
  const steps: SequenceStep[] = [];
  const lookups = new Map<string, ReturnType<typeof findActionWithVersions>>(); // one read per action named
  for (const [index, input] of inputs.entries()) {
    if (!lookups.has(input.action_id))
      lookups.set(input.action_id, findActionWithVersions(deps.actions, input.action_id));
    const found = await lookups.get(input.action_id);
    if (found === undefined || !mayUse(owner, found.action)) {
      const scope = owner === null ? 'global actions' : 'global actions and actions of its tenant';
      problems.push({
        field: `steps.${index}.action_id`,
        code: 'VALIDATION_ERROR',
        message: `There is no action '${input.action_id}' this sequence may use (it may use ${scope}).`,
      });
      continue;
    }
    const requirement = input.version_requirement?.trim() || null;
    if (requirement !== null && !isVersionRange(requirement)) {
      problems.push({
        field: `steps.${index}.version_requirement`,
        code: 'VALIDATION_ERROR',
        message: `'${requirement}' is not a semver range (for example ^1.2.0).`,
      });
      continue;
    }
    if (pickVersion(found.versions, requirement) === undefined) {
      const available = found.versions.map((v) => v.version).join(', ');
      problems.push({
        field: `steps.${index}.version_requirement`,
        code: 'VALIDATION_ERROR',
        message: `No version of '${found.action.slug}' satisfies '${requirement}' (it has ${available}).`,
      });
      continue;
    }
    revisions.set(found.action.id, found.action.revision);
    steps.push({ order: orders[index] as number, actionId: found.action.id, versionRequirement: requirement });
  }
  if (problems.length > 0) throw new ValidationError('Invalid steps.', problems);
  return { steps: steps.sort((a, b) => a.order - b.order), revisions };
};

/** Every action the new steps use is checked and moved on; newly used ones count one more user, dropped ones one fewer. */
const referenceChanges = (before: readonly SequenceStep[], after: ResolvedSteps): ReferenceChange[] => {
  const previous = new Set(before.map((s) => s.actionId));
  const changes: ReferenceChange[] = [...after.revisions].map(([id, revision]) => ({
    id,
    revision,
    delta: previous.has(id) ? 0 : 1,
  }));
  for (const id of previous) if (!after.revisions.has(id)) changes.push({ id, delta: -1 });
  return changes;
};

const releaseAll = (sequence: Sequence): ReferenceChange[] =>
  [...new Set(sequence.steps.map((s) => s.actionId))].map((id) => ({ id, delta: -1 }));

const findVisible = (deps: CatalogDeps, caller: Caller, id: string): Promise<Sequence> =>
  findVisibleRecord((i) => deps.sequences.find(i), caller, id, 'Sequence');

export const listSequences = async (deps: CatalogDeps, caller: Caller, query: ListSequencesQuery) =>
  listPage(await deps.sequences.listAll(), caller, query, sequenceView);

export const createSequence = async (deps: CatalogDeps, caller: Caller, command: CreateSequenceCommand) => {
  const tenantId = await ownerTenant(deps, caller, command.tenant_id, 'sequence');
  const version = recordVersion(command.version);
  const { id, shortId } = await deps.ids.next('sequence');
  return retrying(async () => {
    const resolved = await resolveSteps(deps, tenantId, command.steps);
    const sequence: Sequence = {
      ...newRecord({ id, shortId }, command, version, tenantId, deps.clock.now().toISOString()),
      steps: resolved.steps,
    };
    await deps.sequences.create(sequence, referenceChanges([], resolved));
    return sequenceView(sequence);
  });
};

export const getSequence = async (deps: CatalogDeps, caller: Caller, id: string) =>
  sequenceView(await findVisible(deps, caller, id));

export const updateSequence = async (deps: CatalogDeps, caller: Caller, id: string, command: UpdateSequenceCommand) =>
  retrying(async () => {
    const sequence = await findVisible(deps, caller, id);
    assertCanChange(caller, sequence, 'sequence');
    const version = command.version === undefined ? sequence.version : recordVersion(command.version);
    const resolved =
      command.steps === undefined ? undefined : await resolveSteps(deps, sequence.tenantId, command.steps);
    const next: Sequence = {
      ...sequence,
      ...revisedRecord(sequence, command, version, deps.clock.now().toISOString()),
      steps: resolved?.steps ?? sequence.steps,
    };
    await deps.sequences.update(
      sequence,
      next,
      resolved === undefined ? [] : referenceChanges(sequence.steps, resolved),
    );
    return sequenceView(next);
  });

export const deleteSequence = async (deps: CatalogDeps, caller: Caller, id: string): Promise<void> =>
  retrying(async () => {
    const sequence = await findVisible(deps, caller, id);
    assertCanChange(caller, sequence, 'sequence');
    if (sequence.refCount > 0) {
      const users = (await deps.solutions.listAll()).filter((s) =>
        s.sequences.some((e) => e.sequenceId === sequence.id),
      );
      throw new ConflictError(
        `Sequence '${sequence.name}' is used by ${users.length || sequence.refCount} solution(s): remove it from them first.`,
        {
          solutions: users.map((s) => ({ id: s.id, name: s.name })),
        },
      );
    }
    await deps.sequences.delete(sequence, releaseAll(sequence));
  });
