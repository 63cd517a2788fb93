// Pieces of the administration and profile pages: a secret shown once with a Copy button, and permission names
// grouped by resource. (Deletes confirm in the page with widgets.tsx's ConfirmButton.)
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** Copies `text`; without the clipboard API (or when it refuses) it selects the text so the user can copy it. */
export const CopyButton = ({ text, target, label = 'Copy' }: { text: string; target?: string; label?: string }) => {
  const [done, setDone] = useState<string | undefined>();
  const selectTarget = () => {
    const element = target === undefined ? null : document.getElementById(target);
    if (element === null) return;
    const range = document.createRange();
    range.selectNodeContents(element);
    const selection = window.getSelection();
    selection?.removeAllRanges();
    selection?.addRange(range);
  };
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone('Copied.');
    } catch {
      selectTarget();
      setDone('Selected: press Ctrl+C (⌘C) to copy.');
    }
  };
  return (
    <span class="copy">
      <button type="button" onClick={() => void copy()}>
        {label}
      </button>{' '}
      <span role="status" class="muted">
        {done ?? ''}
      </span>
    </span>
  );
};

/**
 * A secret the API answers once: a block that takes the focus when it appears (the user's eyes go where the focus
 * goes), says it is shown this once, and offers Copy (and `extra`, such as a download).
 */
export const OneTimeSecret = ({
  title,
  secret,
  id,
  children,
  onDone,
}: {
  title: string;
  secret: string;
  id: string;
  children?: ComponentChildren;
  /** Done: the page forgets the secret (it is not kept on screen longer than it is needed). */
  onDone: () => void;
}) => {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => box.current?.focus(), [secret]);
  return (
    <div class="one-time" role="region" aria-labelledby={`${id}-title`} tabIndex={-1} ref={box}>
      <h3 id={`${id}-title`}>{title}</h3>
      <p>Shown this once: copy it now and keep it somewhere safe. It cannot be shown again.</p>
      <pre class="command secret" id={id} data-testid={id}>
        {secret}
      </pre>
      <div class="buttons">
        <CopyButton text={secret} target={id} />
        {children}
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
};

/** The order resources are listed in (the spec's permission table); others follow by name. */
const RESOURCE_ORDER = [
  'deployments',
  'pending_deployments',
  'targets',
  'actions',
  'sequences',
  'solutions',
  'environments',
  'tenants',
  'freezes',
  'users',
  'roles',
  'api_keys',
  'identity_providers',
  'oauth_clients',
  'analysis',
  'encryption',
];

/** Permission names (`<resource>:<action>`) grouped by resource, in the spec's order. */
export const groupPermissions = (names: readonly string[]): { resource: string; permissions: string[] }[] => {
  const groups = new Map<string, string[]>();
  for (const name of names) {
    const resource = name.split(':')[0] ?? name;
    groups.set(resource, [...(groups.get(resource) ?? []), name]);
  }
  const rank = (r: string) => {
    const i = RESOURCE_ORDER.indexOf(r);
    return i === -1 ? RESOURCE_ORDER.length : i;
  };
  return [...groups.entries()]
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .map(([resource, permissions]) => ({ resource, permissions }));
};

const LABELS: Readonly<Record<string, string>> = { api_keys: 'API keys', oauth_clients: 'OAuth clients' };

/** A resource name as a heading: `pending_deployments` -> `Pending deployments`, `api_keys` -> `API keys`. */
export const resourceLabel = (resource: string): string => {
  const known = LABELS[resource];
  if (known !== undefined) return known;
  const words = resource.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
};
