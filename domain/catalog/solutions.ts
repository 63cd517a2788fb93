// Solutions: ordered sequences. Each entry names a sequence the solution may use (global, or of the solution's
// own tenant; a global solution uses only global sequences). Orders as for sequence steps. A solution cannot be
// deleted while another record references it (409).
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
import { recordVersion } from './sequences.js';
import type { Solution, SolutionEntry } from './types.js';
import { solutionView } from './views.js';

export const MAX_SEQUENCES = 40;

export interface EntryInput {
  readonly order?: number | undefined;
  readonly sequence_id: string;
}

export interface CreateSolutionCommand {
  readonly name: string;
  readonly description?: string | null | undefined;
  readonly version?: string | undefined;
  readonly tenant_id?: string | null | undefined;
  readonly sequences: readonly EntryInput[];
}

/** The given fields replace the solution's; `sequences` replaces every entry. The tenant is fixed at creation. */
export interface UpdateSolutionCommand {
  readonly name?: string | undefined;
  readonly description?: string | null | undefined;
  readonly version?: string | undefined;
  readonly sequences?: readonly EntryInput[] | undefined;
}

export interface ListSolutionsQuery extends PageRequest {
  readonly tenant_id?: string | undefined;
}

/** Entries -> stored entries (sequence UUIDs, sorted by order), or a ValidationError naming each bad field. */
const resolveEntries = async (
  deps: CatalogDeps,
  owner: string | null,
  inputs: readonly EntryInput[],
): Promise<SolutionEntry[]> => {
  if (inputs.length === 0) throw ValidationError.field('sequences', 'A solution needs at least one sequence.');
  if (inputs.length > MAX_SEQUENCES)
    throw ValidationError.field('sequences', `A solution has at most ${MAX_SEQUENCES} sequences.`);
  const orders = ordersOf(inputs, 'sequences');
  const problems: FieldProblem[] = [];
  const entries: SolutionEntry[] = [];
  for (const [index, input] of inputs.entries()) {
    const sequence = await deps.sequences.find(input.sequence_id);
    if (sequence === undefined || !mayUse(owner, sequence)) {
      const scope = owner === null ? 'global sequences' : 'global sequences and sequences of its tenant';
      problems.push({
        field: `sequences.${index}.sequence_id`,
        code: 'VALIDATION_ERROR',
        message: `There is no sequence '${input.sequence_id}' this solution may use (it may use ${scope}).`,
      });
      continue;
    }
    entries.push({ order: orders[index] as number, sequenceId: sequence.id });
  }
  if (problems.length > 0) throw new ValidationError('Invalid sequences.', problems);
  return entries.sort((a, b) => a.order - b.order);
};

const referenceChanges = (before: readonly SolutionEntry[], after: readonly SolutionEntry[]): ReferenceChange[] => {
  const previous = new Set(before.map((e) => e.sequenceId));
  const next = new Set(after.map((e) => e.sequenceId));
  return [
    ...[...next].filter((id) => !previous.has(id)).map((id) => ({ id, delta: 1 as const })),
    ...[...previous].filter((id) => !next.has(id)).map((id) => ({ id, delta: -1 as const })),
  ];
};

const findVisible = (deps: CatalogDeps, caller: Caller, id: string): Promise<Solution> =>
  findVisibleRecord((i) => deps.solutions.find(i), caller, id, 'Solution');

export const listSolutions = async (deps: CatalogDeps, caller: Caller, query: ListSolutionsQuery) =>
  listPage(await deps.solutions.listAll(), caller, query, solutionView);

export const createSolution = async (deps: CatalogDeps, caller: Caller, command: CreateSolutionCommand) => {
  const tenantId = await ownerTenant(deps, caller, command.tenant_id, 'solution');
  const version = recordVersion(command.version);
  const { id, shortId } = await deps.ids.next('solution');
  return retrying(async () => {
    const sequences = await resolveEntries(deps, tenantId, command.sequences);
    const solution: Solution = {
      ...newRecord({ id, shortId }, command, version, tenantId, deps.clock.now().toISOString()),
      sequences,
    };
    await deps.solutions.create(solution, referenceChanges([], sequences));
    return solutionView(solution);
  });
};

export const getSolution = async (deps: CatalogDeps, caller: Caller, id: string) =>
  solutionView(await findVisible(deps, caller, id));

export const updateSolution = async (deps: CatalogDeps, caller: Caller, id: string, command: UpdateSolutionCommand) =>
  retrying(async () => {
    const solution = await findVisible(deps, caller, id);
    assertCanChange(caller, solution, 'solution');
    const version = command.version === undefined ? solution.version : recordVersion(command.version);
    const sequences =
      command.sequences === undefined
        ? solution.sequences
        : await resolveEntries(deps, solution.tenantId, command.sequences);
    const next: Solution = {
      ...solution,
      ...revisedRecord(solution, command, version, deps.clock.now().toISOString()),
      sequences,
    };
    await deps.solutions.update(solution, next, referenceChanges(solution.sequences, sequences));
    return solutionView(next);
  });

export const deleteSolution = async (deps: CatalogDeps, caller: Caller, id: string): Promise<void> =>
  retrying(async () => {
    const solution = await findVisible(deps, caller, id);
    assertCanChange(caller, solution, 'solution');
    if (solution.refCount > 0)
      throw new ConflictError(
        `Solution '${solution.name}' is still referenced by ${solution.refCount} record(s) (deployment freezes): remove those first.`,
      );
    await deps.solutions.delete(solution, referenceChanges(solution.sequences, []));
  });
