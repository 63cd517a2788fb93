// The catalog's script editor: a monospace textarea where Tab indents; Esc then Tab leaves it.
import { useRef } from 'preact/hooks';

const INDENT = '  ';

/**
 * A script editor: a monospace textarea where Tab inserts two spaces and Shift+Tab removes them at the line start.
 * Esc hands Tab back to the page (the next Tab leaves the editor), so the keyboard is never trapped.
 */
export const ScriptEditor = ({
  id,
  label,
  value,
  onInput,
  required = false,
  rows = 10,
}: {
  id: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  required?: boolean;
  rows?: number;
}) => {
  const tabLeaves = useRef(false);
  const onKeyDown = (event: KeyboardEvent) => {
    const area = event.currentTarget as HTMLTextAreaElement;
    if (event.key === 'Escape') {
      tabLeaves.current = true;
      return;
    }
    if (event.key !== 'Tab' || tabLeaves.current || event.altKey || event.ctrlKey || event.metaKey) {
      tabLeaves.current = false;
      return;
    }
    event.preventDefault();
    const { selectionStart: start, selectionEnd: end } = area;
    const text = area.value;
    if (event.shiftKey) {
      const lineStart = text.lastIndexOf('\n', start - 1) + 1;
      if (!text.startsWith(INDENT, lineStart)) return;
      area.value = text.slice(0, lineStart) + text.slice(lineStart + INDENT.length);
      area.selectionStart = area.selectionEnd = Math.max(lineStart, start - INDENT.length);
    } else {
      area.value = text.slice(0, start) + INDENT + text.slice(end);
      area.selectionStart = area.selectionEnd = start + INDENT.length;
    }
    onInput(area.value);
  };
  return (
    <div class="script-editor">
      <label for={id}>{label}</label>
      <textarea
        id={id}
        class="code"
        rows={rows}
        spellcheck={false}
        autocapitalize="off"
        autocomplete="off"
        required={required}
        value={value}
        aria-describedby={`${id}-hint`}
        onKeyDown={onKeyDown}
        onInput={(e) => onInput((e.target as HTMLTextAreaElement).value)}
      />
      <p id={`${id}-hint`} class="muted hint">
        Tab indents; press Esc, then Tab, to leave the editor.
      </p>
    </div>
  );
};
