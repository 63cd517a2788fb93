// Pieces the fleet pages (targets, enrollment tokens, triggers, webhooks) share: tags as `key=value` text, counts in
// words, scope names. (Secrets shown once are copy-widgets.tsx's; deletes confirm with widgets.tsx's ConfirmButton.)
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';

export interface Tag {
  readonly key: string;
  readonly value: string;
}

/** `role=web, env=prod` as tags (a pair without `=` is a key with an empty value); blanks dropped. */
export const parseTags = (text: string): Tag[] =>
  text
    .split(',')
    .map((pair) => pair.trim())
    .filter((pair) => pair !== '')
    .map((pair) => {
      const [key, ...value] = pair.split('=');
      return { key: key!.trim(), value: value.join('=').trim() };
    });

export const tagsText = (tags: readonly Tag[]): string => tags.map((t) => `${t.key}=${t.value}`).join(', ');

/** Tags as small chips (or a dash). */
export const TagChips = ({ tags }: { tags: readonly Tag[] }) =>
  tags.length === 0 ? (
    <span class="muted">—</span>
  ) : (
    <ul class="chips">
      {tags.map((t) => (
        <li key={`${t.key}=${t.value}`}>
          <code>
            {t.key}={t.value}
          </code>
        </li>
      ))}
    </ul>
  );

/** What a fleet page's secret says of itself (copy-widgets.tsx's SecretOnce). */
export const FLEET_ONCE_NOTE = 'Shown this once: copy it now. It is not shown again (the lists never show it).';

/** `n` things, in words: "1 target", "2 targets". */
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * Tenant and environment names by id, read once from the lists the caller may read (tenants:read,
 * environments:read); an id the caller cannot name stays an id.
 */
export const useScopeNames = (permissions: ReadonlySet<string>) => {
  const [names, setNames] = useState<ReadonlyMap<string, string>>(new Map());
  const [environments, setEnvironments] = useState<readonly { id: string; name: string }[]>([]);
  useEffect(() => {
    const read = async (path: string) =>
      (await api<{ data: { id: string; name: string }[] }>('GET', `${path}?limit=100`).catch(() => ({ data: [] })))
        .data;
    void Promise.all([
      permissions.has('tenants:read') ? read('/tenants') : Promise.resolve([]),
      permissions.has('environments:read') ? read('/environments') : Promise.resolve([]),
    ]).then(([tenants, envs]) => {
      setNames(new Map([...tenants, ...envs].map((r) => [r.id, r.name])));
      setEnvironments(envs);
    });
  }, []);
  const nameOf = (id: string | null | undefined, none = '—') =>
    id === null || id === undefined ? none : (names.get(id) ?? id);
  return { nameOf, environments };
};
