// Pieces of the identity-provider and OAuth-client pages: a secret shown once with a Copy button, and a value with a
// Copy button (a redirect URI to register). (Deletes confirm in the page with widgets.tsx's ConfirmButton.)
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** Copies `text`; where the clipboard is refused (no permission, not a secure context), selects `fallback` instead. */
export const CopyButton = ({
  text,
  label,
  select,
}: {
  text: string;
  label: string;
  select: () => HTMLElement | null;
}) => {
  const [said, setSaid] = useState<string | undefined>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setSaid('Copied.');
    } catch {
      const element = select();
      if (element !== null) {
        const range = document.createRange();
        range.selectNodeContents(element);
        window.getSelection()?.removeAllRanges();
        window.getSelection()?.addRange(range);
      }
      setSaid('Selected: press Ctrl+C (or ⌘C) to copy.');
    }
  };
  return (
    <span class="copy">
      <button type="button" aria-label={label} onClick={() => void copy()}>
        Copy
      </button>{' '}
      <span role="status">{said ?? ''}</span>
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

/** A secret the API answers once: shown here, with Copy, until dismissed; never in a list afterwards. */
export const SecretOnce = ({
  title,
  secret,
  children,
  onDismiss,
}: {
  title: string;
  secret: string;
  children?: ComponentChildren;
  onDismiss: () => void;
}) => {
  const pre = useRef<HTMLPreElement>(null);
  const box = useRef<HTMLElement>(null);
  useEffect(() => box.current?.focus(), [secret]); // where the user looks, and where a screen reader reads
  return (
    <section class="secret-once" aria-labelledby="secret-once-title" tabIndex={-1} ref={box}>
      <h2 id="secret-once-title">{title}</h2>
      <p>
        <strong>Shown this once.</strong> Copy it now: it cannot be shown again (rotate it for a new one).
      </p>
      {children}
      <pre class="command" ref={pre} data-testid="secret-once">
        {secret}
      </pre>
      <div class="buttons">
        <CopyButton text={secret} label={`Copy ${title.toLowerCase()}`} select={() => pre.current} />
        <button type="button" onClick={onDismiss}>
          Done
        </button>
      </div>
    </section>
  );
};
