// A deployment's log: search, follow (the view stays at the newest line), download as a file, and the lines with
// their target and colours. The search and follow choices are the page's: they outlive a move to another deployment.
import { useEffect, useRef, useState } from 'preact/hooks';
import { Ansi } from '../ansi.js';
import type { Line } from './records.js';

/** The log view's choices, kept by the page. */
export const useLogChoices = () => {
  const [follow, setFollow] = useState(true);
  const [search, setSearch] = useState('');
  return { follow, setFollow, search, setSearch };
};

export const LogView = ({
  id,
  lines,
  choices: { follow, setFollow, search, setSearch },
}: {
  id: string;
  lines: readonly Line[];
  choices: ReturnType<typeof useLogChoices>;
}) => {
  const logEnd = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (follow) logEnd.current?.scrollIntoView({ block: 'end' });
  }, [lines, follow]);
  const shown = search === '' ? lines : lines.filter((l) => l.text.toLowerCase().includes(search.toLowerCase()));
  const download = () => {
    const text = lines.map((l) => `[${l.target}] ${l.text}`).join('\n');
    const link = document.createElement('a');
    link.href = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    link.download = `deployment-${id}.log`;
    link.click();
    URL.revokeObjectURL(link.href);
  };
  return (
    <>
      <h2>Log</h2>
      <div class="log-tools">
        <label>
          Search <input type="search" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          <input type="checkbox" checked={follow} onChange={(e) => setFollow((e.target as HTMLInputElement).checked)} />{' '}
          Follow
        </label>
        <button type="button" onClick={download}>
          Download
        </button>
      </div>
      <div class="log" role="log" aria-live="polite" aria-label="Deployment log">
        {shown.map((l) => (
          <div class={`line ${l.stream}`} key={l.seq}>
            <span class="target">{l.target}</span> <Ansi text={l.text} />
          </div>
        ))}
        <div ref={logEnd} />
      </div>
    </>
  );
};
