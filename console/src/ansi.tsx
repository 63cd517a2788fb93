// ANSI SGR colours of command output rendered as spans (foreground colours and bold; other escapes dropped). Text is
// rendered as text nodes, never as HTML, so output cannot inject markup.
import type { JSX } from 'preact';

const COLOURS = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white'];
const ESCAPE = /\u001b\[([0-9;]*)m/g;
/** Every other escape: CSI sequences (cursor moves, erases), OSC ones (OSC 8 links, titles: ended by BEL or ST), and
 * any stray ESC or other C0 control but tab, so nothing of a link or a title is followed or shown raw. */
const OTHER =
  /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-_]?|[\u0000-\u0008\u000b-\u001f\u007f]/g;

export const Ansi = ({ text }: { text: string }): JSX.Element => {
  const parts: JSX.Element[] = [];
  let colour: string | undefined;
  let bold = false;
  let at = 0;
  const push = (chunk: string) => {
    const clean = chunk.replace(OTHER, '');
    if (clean === '') return;
    const cls = [colour === undefined ? '' : `ansi-${colour}`, bold ? 'ansi-bold' : ''].join(' ').trim();
    parts.push(cls === '' ? <>{clean}</> : <span class={cls}>{clean}</span>);
  };
  for (const match of text.matchAll(ESCAPE)) {
    push(text.slice(at, match.index));
    at = (match.index ?? 0) + match[0].length;
    for (const code of (match[1] === '' ? '0' : (match[1] ?? '0')).split(';').map(Number)) {
      if (code === 0) {
        colour = undefined;
        bold = false;
      } else if (code === 1) bold = true;
      else if (code === 22) bold = false;
      else if (code >= 30 && code <= 37) colour = COLOURS[code - 30];
      else if (code >= 90 && code <= 97) colour = COLOURS[code - 90];
      else if (code === 39) colour = undefined;
    }
  }
  push(text.slice(at));
  return <>{parts}</>;
};
