// Pieces the fleet pages (targets, enrollment tokens, triggers, webhooks) share: a Copy button, the block that shows
// a secret once, and tags as `key=value` text. (Deletes confirm in the page with widgets.tsx's ConfirmButton.)
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
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

/**
 * Copies `text` (navigator.clipboard); where the clipboard is not available (an http page, a refusal) the text of
 * `select` (an element's id) is selected instead, so Ctrl+C copies it, and the button says so.
 */
export const CopyButton = ({ text, select, label }: { text: string; select?: string; label?: string }) => {
  const [said, setSaid] = useState<string | undefined>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setSaid('Copied');
    } catch {
      const element = select === undefined ? null : document.getElementById(select);
      if (element !== null) {
        const range = document.createRange();
        range.selectNodeContents(element);
        const selection = window.getSelection();
        selection?.removeAllRanges();
        selection?.addRange(range);
      }
      setSaid('Selected: press Ctrl+C to copy');
    }
  };
  return (
    <>
      <button type="button" aria-label={label} onClick={() => void copy()}>
        Copy
      </button>
      <span role="status" class="muted copy-said">
        {said ?? ''}
      </span>
    </>
  );
};

/**
 * A secret shown once, where the user looks: a heading that takes the focus, what it is, the value (and anything
 * else worth copying, `children`) with Copy buttons, and a Done button that forgets it.
 */
export const OnceSecret = ({
  title,
  id,
  value,
  children,
  onDone,
}: {
  title: string;
  id: string;
  value: string;
  children?: ComponentChildren;
  onDone: () => void;
}) => {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [value]);
  return (
    <section class="once" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`} tabIndex={-1} ref={heading}>
        {title}
      </h3>
      <p>Shown this once: copy it now. It is not shown again (the lists never show it).</p>
      <pre class="command" id={id} data-testid={id}>
        {value}
      </pre>
      <CopyButton text={value} select={id} label={`Copy ${title.toLowerCase()}`} />
      {children}
      <p>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </p>
    </section>
  );
};

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
