// What the catalog use cases need, and the pieces they share: tenancy scope and retries of optimistic writes.
import { NotFoundError, ValidationError } from '../errors.js';
import { ForbiddenError } from '../identity/errors.js';
import type { Caller } from '../identity/types.js';
import { pageOf, type PageRequest } from '../shared/pagination.js';
import type { TenantLookup } from '../shared/lookups.js';
import type { Clock, IdGenerator } from '../shared/ports.js';
import { ConcurrentChangeError } from './errors.js';
import type { ActionRepository, SequenceRepository, SolutionRepository } from './ports.js';
import { isVisibleTo } from './resolve.js';

export interface CatalogDeps {
  readonly actions: ActionRepository;
  readonly sequences: SequenceRepository;
  readonly solutions: SolutionRepository;
  readonly tenants: TenantLookup;
  readonly ids: IdGenerator;
  readonly clock: Clock;
}

/** How often a use case re-reads and re-applies a change whose conditional write lost a race. */
const ATTEMPTS = 3;

/** Runs `change` again when its write lost a race (ConcurrentChangeError); the last failure reaches the caller. */
export const retrying = async <T>(change: () => Promise<T>): Promise<T> => {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await change();
    } catch (error) {
      if (!(error instanceof ConcurrentChangeError) || attempt >= ATTEMPTS) throw error;
    }
  }
};

/**
 * The tenant a new record belongs to. A tenant-scoped caller's records are its tenant's (naming another tenant,
 * or null for global, answers 403); a global caller may name an existing tenant by id or short id (400 when
 * unknown) or leave it global.
 */
export const ownerTenant = async (
  deps: Pick<CatalogDeps, 'tenants'>,
  caller: Caller,
  requested: string | null | undefined,
  what: string,
): Promise<string | null> => {
  if (caller.tenantId !== null) {
    if (requested === undefined || requested === caller.tenantId) return caller.tenantId;
    const named = requested === null ? undefined : await deps.tenants.findTenant(requested);
    if (named?.id === caller.tenantId) return caller.tenantId;
    throw new ForbiddenError(`You can only create ${what}s of your own tenant.`, { reason: 'tenant_restriction' });
  }
  if (requested === undefined || requested === null) return null;
  const tenant = await deps.tenants.findTenant(requested);
  if (tenant === undefined) throw ValidationError.field('tenant_id', `There is no tenant '${requested}'.`);
  return tenant.id;
};

/** A tenant-scoped caller may read global records but change only its own tenant's (403 otherwise). */
export const assertCanChange = (caller: Caller, record: { readonly tenantId: string | null }, what: string): void => {
  if (caller.tenantId !== null && record.tenantId !== caller.tenantId) {
    throw new ForbiddenError(`Global ${what}s can only be changed by global users.`, { reason: 'tenant_restriction' });
  }
};

/** Whether a record of `owner` (null: global) may use a record of `used.tenantId`: global ones, or its own tenant's. */
export const mayUse = (owner: string | null, used: { readonly tenantId: string | null }): boolean =>
  used.tenantId === null || used.tenantId === owner;

/**
 * The list filter: a tenant-scoped caller sees its tenant's records and global ones; a global caller sees
 * everything, or with `tenant_id` what that tenant sees (its records and global ones).
 */
export const listedFor =
  (caller: Caller, tenantFilter: string | undefined) =>
  (record: { readonly tenantId: string | null }): boolean => {
    const tenant = caller.tenantId ?? tenantFilter;
    return tenant === undefined || record.tenantId === null || record.tenantId === tenant;
  };

/** Orders of the items of a list: all given (a permutation of 1..n) or none (array positions). */
export const ordersOf = (items: readonly { readonly order?: number | undefined }[], field: string): number[] => {
  const given = items.filter((i) => i.order !== undefined).length;
  if (given === 0) return items.map((_, index) => index + 1);
  const problems = items.flatMap((item, index) => {
    if (item.order === undefined)
      return [
        {
          field: `${field}.${index}.order`,
          code: 'VALIDATION_ERROR' as const,
          message: 'Give every order or none (none: array positions).',
        },
      ];
    const out = !Number.isInteger(item.order) || item.order < 1 || item.order > items.length;
    const twice = items.findIndex((other) => other.order === item.order) !== index;
    if (out)
      return [
        {
          field: `${field}.${index}.order`,
          code: 'VALIDATION_ERROR' as const,
          message: `Orders must be 1 to ${items.length}.`,
        },
      ];
    if (twice)
      return [
        {
          field: `${field}.${index}.order`,
          code: 'VALIDATION_ERROR' as const,
          message: `Order ${item.order} is used twice.`,
        },
      ];
    return [];
  });
  if (problems.length > 0) throw new ValidationError('Invalid orders.', problems);
  return items.map((item) => item.order as number);
};

/** A catalog record a tenant may own (a sequence, a solution). */
interface OwnedRecord {
  readonly tenantId: string | null;
}

/** The record by UUID or short id when the caller may see it; NotFoundError (as `what`) otherwise. */
export const findVisible = async <T extends OwnedRecord>(
  find: (id: string) => Promise<T | undefined>,
  caller: Caller,
  id: string,
  what: string,
): Promise<T> => {
  const record = await find(id);
  if (record === undefined || !isVisibleTo(caller.tenantId, record)) throw new NotFoundError(what, id);
  return record;
};

/** One page of the records the caller lists (see listedFor), as views. */
export const listPage = <T extends OwnedRecord, V>(
  records: readonly T[],
  caller: Caller,
  query: PageRequest & { readonly tenant_id?: string | undefined },
  view: (record: T) => V,
) => {
  const page = pageOf(records.filter(listedFor(caller, query.tenant_id)), query);
  return { data: page.data.map(view), meta: page.meta };
};

/** The fields a versioned record's create command and update command share. */
interface RecordCommand {
  readonly name?: string | undefined;
  readonly description?: string | null | undefined;
}

/** The fields every new versioned record starts with: revision 1, no references, created now. */
export const newRecord = (
  ids: { readonly id: string; readonly shortId: string },
  command: RecordCommand & { readonly name: string },
  version: string,
  tenantId: string | null,
  now: string,
) => ({
  id: ids.id,
  shortId: ids.shortId,
  name: command.name,
  description: command.description ?? null,
  version,
  tenantId,
  revision: 1,
  refCount: 0,
  createdAt: now,
  updatedAt: now,
});

/** The fields an update moves on a versioned record: the given name and description, the version, the next revision. */
export const revisedRecord = (
  record: { readonly name: string; readonly description: string | null; readonly revision: number },
  command: RecordCommand,
  version: string,
  now: string,
) => ({
  name: command.name ?? record.name,
  description: command.description === undefined ? record.description : command.description,
  version,
  revision: record.revision + 1,
  updatedAt: now,
});
