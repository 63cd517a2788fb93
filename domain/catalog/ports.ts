// Ports of the catalog context. Adapters: infra/dynamodb/{action,sequence,solution}-repository.ts; fakes:
// tests/fakes/catalog.ts.
//
// References are race-safe without locks: a sequence write changes the `refCount` of each action it starts or
// stops using, and moves the `revision` of each action it uses, conditioned on the revision its validation saw,
// in the same transaction. Version changes and action deletes are conditioned on the revision they read, and
// deletes on `refCount = 0`. So a version cannot disappear under a sequence being validated against it, and an
// action cannot be deleted while a sequence is being written that uses it. Solutions reference sequences the
// same way through the sequence's `refCount`. Every failed condition is a ConcurrentChangeError.
import type { SolutionLookup } from '../shared/lookups.js';
import type { Action, ActionVersion, ActionWithVersions, Sequence, Solution } from './types.js';

/** One referenced record's change within a write: its reference count moves by `delta`. */
export interface ReferenceChange {
  readonly id: string;
  readonly delta: -1 | 0 | 1;
  /** When set, the write requires the record's revision to still be this one, and moves it on. */
  readonly revision?: number;
}

export type VersionChange =
  | { readonly kind: 'create'; readonly version: ActionVersion }
  | { readonly kind: 'replace'; readonly previous: ActionVersion; readonly next: ActionVersion }
  | { readonly kind: 'delete'; readonly version: ActionVersion };

export interface ActionRepository {
  /** Every action, oldest first (versions not included). */
  listAll(): Promise<readonly Action[]>;
  /** The action and all its versions (newest first), by UUID or short id; undefined when missing. */
  find(idOrShortId: string): Promise<ActionWithVersions | undefined>;
  /**
   * The action with its first version, claiming the slug within its scope and referencing its tenant.
   * ConflictError (field `slug`) when the slug is taken; ValidationError (field `tenant_id`) when the tenant is gone.
   */
  create(action: Action, first: ActionVersion): Promise<void>;
  /** Changes name, description and updatedAt only; the record as stored after. NotFoundError when gone. */
  rename(action: Action, change: Pick<Action, 'name' | 'description' | 'updatedAt'>): Promise<Action>;
  /**
   * One version change plus the action's derived fields (`next`: latestVersion, versionCount, updatedAt and
   * revision = previous.revision + 1), only while the action's revision is still previous.revision.
   * ConcurrentChangeError otherwise (or when the new version number exists after all).
   */
  changeVersions(previous: Action, next: Action, change: VersionChange): Promise<void>;
  /**
   * The action, every version, the slug claim, the short-id alias and the tenant reference, only while the
   * revision is still action.revision and refCount is 0: ConcurrentChangeError otherwise.
   */
  delete(action: Action, versions: readonly ActionVersion[]): Promise<void>;
}

export interface SequenceRepository {
  /** Every sequence, oldest first. */
  listAll(): Promise<readonly Sequence[]>;
  find(idOrShortId: string): Promise<Sequence | undefined>;
  /** Sequences with at least one step on the action. */
  listUsingAction(actionId: string): Promise<readonly Sequence[]>;
  /**
   * The sequence and its alias, references its tenant, and applies `actions` (see ReferenceChange).
   * ConcurrentChangeError when an action changed or vanished; ValidationError (`tenant_id`) when the tenant is gone.
   */
  create(sequence: Sequence, actions: readonly ReferenceChange[]): Promise<void>;
  /** Only while the sequence's revision is still previous.revision (next.revision is the one after). */
  update(previous: Sequence, next: Sequence, actions: readonly ReferenceChange[]): Promise<void>;
  /** Only while the revision is unchanged and refCount is 0; releases its tenant and `actions`. */
  delete(sequence: Sequence, actions: readonly ReferenceChange[]): Promise<void>;
}

export interface SolutionRepository extends SolutionLookup {
  /** Every solution, oldest first. */
  listAll(): Promise<readonly Solution[]>;
  find(idOrShortId: string): Promise<Solution | undefined>;
  /** Same contract as SequenceRepository.create, with sequences as the referenced records. */
  create(solution: Solution, sequences: readonly ReferenceChange[]): Promise<void>;
  update(previous: Solution, next: Solution, sequences: readonly ReferenceChange[]): Promise<void>;
  /** Only while the revision is unchanged and refCount is 0 (ConcurrentChangeError otherwise). */
  delete(solution: Solution, sequences: readonly ReferenceChange[]): Promise<void>;
}
