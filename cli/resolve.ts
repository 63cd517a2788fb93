// Names to ids through the list endpoints, as a curl user would: an action by slug, id or short id; a sequence or
// solution by name, id or short id; a target by name, id or short id.
import type { Api } from './api.js';
import { CliError, EXIT, RefusedError } from './errors.js';

/** The list, or undefined when the credential may not read it (the server then resolves ids and short ids itself). */
const listOrSkip = async <T>(api: Api, path: string): Promise<T[] | undefined> => {
  try {
    return await listAll<T>(api, path);
  } catch (error) {
    if (error instanceof RefusedError && error.status === 403) return undefined;
    throw error;
  }
};

interface Page<T> {
  readonly data: readonly T[];
  readonly meta?: { readonly has_next?: boolean };
}

/** Every item of a paged list (100 a page). */
export const listAll = async <T>(api: Api, path: string): Promise<T[]> => {
  const items: T[] = [];
  for (let page = 1; page <= 1000; page += 1) {
    const answer = await api.get<Page<T>>(`${path}${path.includes('?') ? '&' : '?'}page=${page}&limit=100`);
    items.push(...answer.data);
    if (!answer.meta?.has_next) break;
  }
  return items;
};

export type SourceKind = 'action' | 'sequence' | 'solution';
const PATHS: Record<SourceKind, string> = { action: '/actions', sequence: '/sequences', solution: '/solutions' };

interface Named {
  readonly id: string;
  readonly short_id?: string;
  readonly slug?: string;
  readonly name?: string;
}

/** The one record `ref` names: its id or short id first, then its slug (actions) or name, case-insensitively. */
export const pick = <T extends Named>(items: readonly T[], ref: string, nameField: 'slug' | 'name'): T[] => {
  const byId = items.filter((item) => item.id === ref || item.short_id === ref);
  if (byId.length > 0) return byId;
  const exact = items.filter((item) => item[nameField] === ref);
  if (exact.length > 0) return exact;
  return items.filter((item) => item[nameField]?.toLowerCase() === ref.toLowerCase());
};

export const resolveSource = async (api: Api, kind: SourceKind, ref: string): Promise<string> => {
  const nameField = kind === 'action' ? 'slug' : 'name';
  const items = await listOrSkip<Named>(api, PATHS[kind]);
  if (items === undefined) return ref;
  const found = pick(items, ref, nameField);
  if (found.length === 1) return (found[0] as Named).id;
  if (found.length > 1)
    throw new CliError(
      EXIT.usage,
      `--${kind} "${ref}" names ${found.length} ${kind}s (${found.map((f) => f.short_id ?? f.id).join(', ')}): give the id`,
    );
  throw new CliError(EXIT.refused, `no ${kind} with ${nameField}, id or short id "${ref}" that you may see`);
};

export const resolveTargets = async (api: Api, refs: readonly string[]): Promise<string[]> => {
  if (refs.length === 0) return [];
  const targets = await listOrSkip<Named>(api, '/targets');
  if (targets === undefined) return [...refs];
  return refs.map((ref) => {
    const found = pick(targets, ref, 'name');
    if (found.length === 1) return (found[0] as Named).id;
    if (found.length > 1)
      throw new CliError(EXIT.usage, `--target "${ref}" names ${found.length} targets: give the id`);
    throw new CliError(EXIT.refused, `no target with name, id or short id "${ref}" that you may see`);
  });
};
