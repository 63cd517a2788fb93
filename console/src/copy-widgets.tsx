// A value to copy, the one copy every page uses: the Copy button, a value shown with it (a redirect URI to register),
// and a secret the API answers once (an API key, recovery codes, an enrollment token, a trigger's, a webhook's or an
// OAuth client's secret).
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** Selects an element's text, so Ctrl+C copies it. */
const selectText = (element: HTMLElement | null) => {
  if (element === null) return;
  const range = document.createRange();
  range.selectNodeContents(element);
  const selection = window.getSelection();
  selection?.removeAllRanges();
  selection?.addRange(range);
};

/**
 * Copies `text` (navigator.clipboard); where the clipboard is not available (an http page, a refusal) the text of
 * `select` (an element's id, or the element) is selected instead, so Ctrl+C copies it, and the status line says so.
 * `label` is the button's accessible name where the visible word ("Copy", or `children`) does not say what it copies.
 */
export const CopyButton = ({
  text,
  select,
  label,
  children = 'Copy',
}: {
  text: string;
  select?: string | (() => HTMLElement | null);
  label?: string;
  children?: ComponentChildren;
}) => {
  const [said, setSaid] = useState<string | undefined>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setSaid('Copied.');
    } catch {
      selectText(typeof select === 'string' ? document.getElementById(select) : (select?.() ?? null));
      setSaid('Selected: press Ctrl+C (⌘C) to copy.');
    }
  };
  return (
    <span class="copy">
      <button type="button" aria-label={label} onClick={() => void copy()}>
        {children}
      </button>{' '}
      <span role="status" class="muted">
        {said ?? ''}
      </span>
    </span>
  );
};

/** A value to take elsewhere (a redirect URI): the value and a Copy button. */
export const CopyValue = ({ value, label }: { value: string; label: string }) => {
  const code = useRef<HTMLElement>(null);
  return (
    <span class="copy-value">
      <code ref={code}>{value}</code> <CopyButton text={value} label={`Copy ${label}`} select={() => code.current} />
    </span>
  );
};

/**
 * A secret the API answers once, where the user looks: a block that takes the focus when it appears (the block, or
 * its heading where `focus` says so), says it is shown this once (`note`), shows what the secret is for (`details`),
 * the secret with Copy (and `children`, such as a download), and Done, which forgets it: the lists never show it.
 */
export const SecretOnce = ({
  title,
  id,
  secret,
  note = 'Shown this once: copy it now and keep it somewhere safe. It cannot be shown again.',
  copyLabel,
  focus = 'block',
  details,
  children,
  onDone,
}: {
  title: string;
  /** The id (and test id) of the secret's element; `<id>-title` is its heading's. */
  id: string;
  secret: string;
  note?: ComponentChildren;
  /** The Copy button's accessible name, where "Copy" alone is not enough on the page. */
  copyLabel?: string;
  focus?: 'block' | 'heading';
  details?: ComponentChildren;
  children?: ComponentChildren;
  onDone: () => void;
}) => {
  const block = useRef<HTMLElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => (focus === 'heading' ? heading : block).current?.focus(), [secret]);
  return (
    <section
      class="secret-once"
      aria-labelledby={`${id}-title`}
      tabIndex={focus === 'block' ? -1 : undefined}
      ref={block}
    >
      <h3 id={`${id}-title`} tabIndex={focus === 'heading' ? -1 : undefined} ref={heading}>
        {title}
      </h3>
      <p>{note}</p>
      {details}
      <pre class="command" id={id} data-testid={id}>
        {secret}
      </pre>
      <div class="buttons">
        <CopyButton text={secret} select={id} label={copyLabel} />
        {children}
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </section>
  );
};
