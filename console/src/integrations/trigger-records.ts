// A deploy trigger as the API answers it, and what it deploys: an action, a sequence or a solution, named from the
// lists the caller may read.
import { useList } from '../use-list.js';
import type { Tag } from '../fleet-widgets.js';
import type { Filter, Rules } from './signed-call.js';

export interface Trigger {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly request: {
    action_id?: string | null;
    sequence_id?: string | null;
    solution_id?: string | null;
    version_requirement?: string | null;
    target_ids?: string[];
    target_tags?: Tag[];
    target_tags_match_all?: boolean;
    /** Masked: every value reads `***`. */
    variables?: Record<string, string>;
    [field: string]: unknown;
  };
  readonly rules: Rules;
  readonly filters: Filter[];
  readonly enabled: boolean;
  readonly hook_url: string;
  readonly last_triggered_at: string | null;
  readonly created_at: string;
}

export type Kind = 'action' | 'sequence' | 'solution';
export type Sources = Record<Kind, readonly { id: string; name: string }[]>;

/** The actions, sequences and solutions the caller may read (an unreadable list is empty). */
export const useSources = (permissions: ReadonlySet<string>): Sources => {
  const list = (kind: Kind, path: string) =>
    useList<{ id: string; name: string }>(permissions.has(`${kind}s:read`) ? path : undefined).rows ?? [];
  return {
    action: list('action', '/actions'),
    sequence: list('sequence', '/sequences'),
    solution: list('solution', '/solutions'),
  };
};

/** What a trigger deploys: `action hello ^1`. */
export const sourceOf = (t: Trigger, sources: Sources) => {
  const r = t.request;
  const [k, id] =
    r.action_id != null
      ? (['action', r.action_id] as const)
      : r.sequence_id != null
        ? (['sequence', r.sequence_id] as const)
        : (['solution', r.solution_id ?? ''] as const);
  const name = sources[k].find((s) => s.id === id)?.name ?? id;
  return `${k} ${name}${r.version_requirement == null ? '' : ` ${r.version_requirement}`}`;
};
