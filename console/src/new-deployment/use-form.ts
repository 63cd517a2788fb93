// The new-deployment form's state: what to deploy (the sources of the chosen kind, and the variables the chosen
// action's latest version declares), where (targets by list or by tags, with how many match; an environment), how
// (order, failure strategy, priority, variables), and the request body they make.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api.js';

export interface Source {
  readonly id: string;
  readonly name: string;
  readonly latest_version?: string | null;
}

/** A variable the chosen action version declares (GET /actions/{id}/versions/{version}). */
export interface Declared {
  readonly name: string;
  readonly description: string | null;
  readonly required: boolean;
  readonly default: string | null;
  readonly secret: boolean;
}

export interface TargetRow {
  readonly id: string;
  readonly name: string;
  readonly status: string;
  readonly tags: { key: string; value: string }[];
}

export type Kind = 'action' | 'sequence' | 'solution';
const PATHS: Record<Kind, string> = { action: '/actions', sequence: '/sequences', solution: '/solutions' };

const parseTags = (text: string) =>
  text
    .split(',')
    .map((pair) => pair.trim())
    .filter((pair) => pair.includes('='))
    .map((pair) => {
      const [key, ...value] = pair.split('=');
      return { key: key!.trim(), value: value.join('=').trim() };
    });

const parseVariables = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')).trim(), line.slice(line.indexOf('=') + 1)]),
  );

/** The lists the form chooses from: the sources of `kind`, the targets, the environments (empty when unreadable). */
const useChoices = (kind: Kind, setSourceId: (id: string) => void) => {
  const [sources, setSources] = useState<Source[]>([]);
  const [targets, setTargets] = useState<TargetRow[]>([]);
  const [environments, setEnvironments] = useState<{ id: string; name: string }[]>([]);
  useEffect(() => {
    setSourceId('');
    api<{ data: Source[] }>('GET', `${PATHS[kind]}?limit=100`).then(
      (answer) => setSources(answer.data),
      () => setSources([]),
    );
  }, [kind]);
  useEffect(() => {
    api<{ data: TargetRow[] }>('GET', '/targets?limit=100').then(
      (answer) => setTargets(answer.data),
      () => setTargets([]),
    );
    api<{ data: { id: string; name: string }[] }>('GET', '/environments?limit=100').then(
      (answer) => setEnvironments(answer.data),
      () => setEnvironments([]),
    );
  }, []);
  return { sources, targets, environments };
};

/** The chosen action's variables, as its latest version declares them: one field each (required, default, secret). */
const useDeclared = (kind: Kind, sourceId: string, sources: readonly Source[]) => {
  const [declared, setDeclared] = useState<Declared[]>([]);
  const [declaredValues, setDeclaredValues] = useState<Record<string, string>>({});
  useEffect(() => {
    setDeclared([]);
    setDeclaredValues({});
    const source = sources.find((s) => s.id === sourceId);
    if (kind !== 'action' || source?.latest_version == null) return;
    let stale = false;
    api<{ variables: Declared[] }>(
      'GET',
      `/actions/${encodeURIComponent(source.id)}/versions/${encodeURIComponent(source.latest_version)}`,
    ).then(
      (v) => !stale && setDeclared(v.variables),
      () => undefined,
    );
    return () => {
      stale = true;
    };
  }, [kind, sourceId, sources]);
  return { declared, declaredValues, setDeclaredValues };
};

export const useNewDeploymentForm = () => {
  const [kind, setKind] = useState<Kind>('action');
  const [sourceId, setSourceId] = useState('');
  const [version, setVersion] = useState('');
  const [byTags, setByTags] = useState(false);
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [tags, setTags] = useState('');
  const [matchAll, setMatchAll] = useState(false);
  // The API's default order (api.md: target_mode defaults to sequential).
  const [mode, setMode] = useState('sequential');
  const [failure, setFailure] = useState('stop_on_first_failure');
  const [priority, setPriority] = useState(0);
  const [variables, setVariables] = useState('');
  // The environment deployed to (a freeze of an environment applies to deployments to it); none when unreadable.
  const [environmentId, setEnvironmentId] = useState('');
  const { sources, targets, environments } = useChoices(kind, setSourceId);
  const { declared, declaredValues, setDeclaredValues } = useDeclared(kind, sourceId, sources);

  const matching = useMemo(() => {
    if (!byTags) return chosen.size;
    const wanted = parseTags(tags);
    if (wanted.length === 0) return 0;
    const has = (t: TargetRow, w: { key: string; value: string }) =>
      t.tags.some((tag) => tag.key === w.key && tag.value === w.value);
    return targets.filter((t) => (matchAll ? wanted.every((w) => has(t, w)) : wanted.some((w) => has(t, w)))).length;
  }, [byTags, chosen, tags, matchAll, targets]);

  const body = (extra: Record<string, unknown> = {}) => ({
    [`${kind}_id`]: sourceId,
    ...(version.trim() === '' ? {} : { version_requirement: version.trim() }),
    ...(environmentId === '' ? {} : { environment_id: environmentId }),
    ...(byTags ? { target_tags: parseTags(tags), target_tags_match_all: matchAll } : { target_ids: [...chosen] }),
    target_mode: mode,
    failure_strategy: failure,
    priority,
    variables: {
      ...parseVariables(variables),
      ...Object.fromEntries(Object.entries(declaredValues).filter(([, value]) => value !== '')),
    },
    ...extra,
  });

  return {
    kind,
    setKind,
    sources,
    sourceId,
    setSourceId,
    version,
    setVersion,
    environments,
    environmentId,
    setEnvironmentId,
    targets,
    byTags,
    setByTags,
    chosen,
    setChosen,
    tags,
    setTags,
    matchAll,
    setMatchAll,
    matching,
    mode,
    setMode,
    failure,
    setFailure,
    priority,
    setPriority,
    declared,
    declaredValues,
    setDeclaredValues,
    variables,
    setVariables,
    body,
  };
};

export type NewDeploymentForm = ReturnType<typeof useNewDeploymentForm>;
