// Targets: online / stale / offline live from GET /sse/targets, their tags and last heartbeat, and (for callers
// who may create targets) an enrollment token with the one-line agent command to copy; the token is shown once.
import { useState } from 'preact/hooks';
import { api, isApiError } from './api.js';
import { when } from './format.js';
import { ErrorLine, LiveBadge, useResourceStream } from './widgets.js';

interface Target {
  readonly id: string;
  readonly name: string;
  readonly hostname: string | null;
  readonly status: string;
  readonly tags: { key: string; value: string }[];
  readonly last_heartbeat_at: string | null;
  readonly agent_version: string | null;
  /** Whether the server takes this agent's version (its major); absent from an older server. */
  readonly agent_compatible?: boolean;
  /** Whether the agent is older than the build the server ships (GET /agent/manifest.json); absent from an older server. */
  readonly agent_outdated?: boolean;
}

const STATUS_CLASS: Record<string, string> = { online: 'state ok', stale: 'state live', offline: 'state bad' };

/** A word as sh reads it back: as it is when plain, else in single quotes. */
const shellWord = (word: string) => (/^[A-Za-z0-9._@:+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);

export const Targets = ({ permissions }: { permissions: ReadonlySet<string> }) => {
  const [targets, live] = useResourceStream<Target>('targets');
  const [command, setCommand] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();

  const enroll = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const tags = String(form.get('tags') ?? '')
      .split(',')
      .map((pair) => pair.trim())
      .filter((pair) => pair !== '')
      .map((pair) => {
        const [key, ...value] = pair.split('=');
        return { key: key!.trim(), value: value.join('=').trim() };
      });
    try {
      const created = await api<{ token: string }>('POST', '/targets/enrollment-tokens', { tags });
      const origin = window.location.origin;
      setCommand(
        `curl -fsSL ${origin}/agent/install.sh | sudo sh -s -- --server ${origin} --enroll ${created.token} --name ${shellWord(String(form.get('name') || 'my-host'))}`,
      );
      setError(undefined);
    } catch (e) {
      setError(isApiError(e) ? e.message : 'The service cannot be reached.');
    }
  };

  const sorted = [...targets.values()].sort((a, b) => a.name.localeCompare(b.name));
  return (
    <section aria-labelledby="targets-title">
      <header class="page-head">
        <h1 id="targets-title">Targets</h1>
        <LiveBadge state={live} />
      </header>
      <table class="list">
        <caption class="visually-hidden">Targets and their agents</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col">Tags</th>
            <th scope="col">Last heard from</th>
            <th scope="col">Agent</th>
          </tr>
        </thead>
        <tbody>
          {sorted.map((t) => (
            <tr key={t.id} data-target-id={t.id}>
              <td>
                {t.name} <span class="muted">{t.hostname}</span>
              </td>
              <td>
                <span class={STATUS_CLASS[t.status] ?? 'state'}>{t.status}</span>
              </td>
              <td>{t.tags.map((tag) => `${tag.key}=${tag.value}`).join(', ')}</td>
              <td>{when(t.last_heartbeat_at)}</td>
              <td>
                {t.agent_version ?? '—'}
                {t.agent_compatible === false ? (
                  <>
                    {' '}
                    <span class="state bad" title="This agent's major version is not the server's: upgrade it">
                      incompatible
                    </span>
                  </>
                ) : t.agent_outdated === true ? (
                  <>
                    {' '}
                    <span
                      class="state live"
                      title="The server ships a newer agent: run the install line again, or start the agent with --auto-update"
                    >
                      outdated
                    </span>
                  </>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {permissions.has('targets:create') ? (
        <>
          <h2>Add a host</h2>
          <form class="inline-form" onSubmit={(e) => void enroll(e)}>
            <label>
              Name <input name="name" placeholder="web-3" />
            </label>
            <label>
              Tags <input name="tags" placeholder="role=web, env=prod" />
            </label>
            <button type="submit">Create an enrollment token</button>
          </form>
          <ErrorLine message={error} />
          {command === undefined ? null : (
            <>
              <p>
                Run this on the Linux host, which needs Node.js 22 or later and curl (the token is shown once and allows
                one registration within 24 hours). It installs the agent as a systemd service; run it again to upgrade,
                or with --uninstall to remove it.
              </p>
              <pre class="command" data-testid="agent-command">
                {command}
              </pre>
              <button type="button" onClick={() => void navigator.clipboard?.writeText(command)}>
                Copy
              </button>
            </>
          )}
        </>
      ) : null}
    </section>
  );
};
