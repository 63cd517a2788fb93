// Hostile text stays text (docs/security.md, "Hostile text"): an action named `<img src=x onerror=alert(1)>`, with
// the same description, whose script prints the same and lines that try to forge SSE frames (`data:`, `event:`,
// `id:`, `retry:`, blank lines, CR, U+2028), is stored and returned as given in JSON; every event of its log stream is
// one `data:` JSON line (the raw SSE text is parsed here, not by an EventSource client that would hide extra fields),
// and each printed line comes back as one message with exactly the printed text.
import { describe, expect, it } from 'vitest';
import { apiClient } from '../support/http.js';
import { useStackWithAgents } from '../support/stack-with-agents.js';

const fixture = useStackWithAgents('hostile');
const api = apiClient(() => fixture.stack.baseUrl);
const call = (method: string, path: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { token: fixture.admin, body });

const HOSTILE = '<img src=x onerror=alert(1)>';
/** What the script prints, line by line (printf %s: nothing is interpreted by the shell). */
const PRINTED = [
  HOSTILE,
  '',
  'data: {"x":1}',
  '',
  'event: done',
  'id: 999999',
  'retry: 1',
  ': a comment',
  '</script><script>alert(2)</script>',
  '\u001b[31mred\u001b[0m \u001b]8;;http://evil.example/\u001b\\link\u001b]8;;\u001b\\',
  'line\u2028separator\u2029paragraph',
  'carriage\rreturn data: {"y":2}',
];
const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
const SCRIPT = PRINTED.map((line) => `printf '%s\\n' ${shellQuote(line)}`).join('\n');

interface Frame {
  readonly lines: readonly string[];
}

/** Splits raw SSE text into frames (blank-line separated), line endings as the SSE spec reads them (CRLF, LF, CR). */
const framesOf = (text: string): Frame[] =>
  text
    .split(/\r\n\r\n|\n\n|\r\r/)
    .filter((block) => block.trim() !== '')
    .map((block) => ({ lines: block.split(/\r\n|\n|\r/) }));

describe('hostile text', () => {
  it(
    'is stored and returned as given, and every SSE event of its log stream is a single data: JSON line',
    { timeout: 120_000 },
    async () => {
      // Prepare: the action, and a deployment of it on local-1
      const created = await call('POST', '/actions', {
        slug: 'hostile',
        name: HOSTILE,
        description: HOSTILE,
        version: { version: '1.0.0', script: SCRIPT },
      });
      expect([created.status, created.json]).toEqual([201, expect.anything()]);
      const deployment = await call('POST', '/deployments', {
        action_id: created.json.id,
        target_tags: [{ key: 'role', value: 'web' }],
      });
      expect([deployment.status, deployment.json]).toEqual([201, expect.anything()]);
      const id = deployment.json.deployment_id as string;
      const until = Date.now() + 60_000;
      let state = '';
      while (Date.now() < until && !['success', 'failed'].includes(state)) {
        await new Promise((r) => setTimeout(r, 500));
        state = (await call('GET', `/deployments/${id}`)).json.state;
      }
      expect(state).toBe('success');

      // Assess: stored and returned as given, as JSON
      const action = await call('GET', `/actions/${created.json.id}`);
      expect(action.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(action.headers.get('x-content-type-options')).toBe('nosniff');
      expect(action.json).toMatchObject({ name: HOSTILE, description: HOSTILE });
      expect((await call('GET', `/deployments/${id}`)).json).toMatchObject({ action_name: HOSTILE });

      // The log stream of the finished deployment, read raw to its end
      const sseToken = (await call('POST', '/auth/sse-token', {})).json.sse_token as string;
      const response = await fetch(`${fixture.stack.baseUrl}/api/v1/deployments/${id}/logs?sse_token=${sseToken}`, {
        signal: AbortSignal.timeout(15_000),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const raw = await response.text();
      const messages: { event: string; data: { log?: { message?: string } } }[] = [];
      for (const frame of framesOf(raw)) {
        const fields = frame.lines.filter((line) => !line.startsWith(':')); // comment lines (keep-alives)
        if (fields.length === 0) continue;
        if (fields.every((line) => /^retry: \d+$/.test(line))) continue; // the server's own closing reconnect hint
        const data = fields.filter((line) => line.startsWith('data:'));
        const others = fields.filter((line) => !line.startsWith('data:'));
        expect([frame.lines, data.length]).toEqual([frame.lines, 1]);
        for (const line of others) expect(line).toMatch(/^(id: [^\r\n]+|retry: \d+)$/);
        messages.push(JSON.parse(data[0]!.slice('data:'.length)) as (typeof messages)[number]);
      }
      // Each printed line is one log message with exactly its text; nothing else came out of it
      const logged = messages.filter((m) => m.event === 'log').map((m) => m.data.log?.message);
      // (a line with a bare CR may be split there by the agent, as a terminal would show it: its frame check above holds)
      for (const line of PRINTED.filter((l) => l !== '' && !l.includes('\r')))
        expect([line, logged.includes(line)]).toEqual([line, true]);
      expect(
        messages
          .map((m) => m.event)
          .filter((e) => !['log', 'state_change', 'step_update', 'progress', 'ping'].includes(e)),
      ).toEqual([]);
      expect(messages.some((m) => (m as unknown as { x?: unknown }).x !== undefined)).toBe(false);
    },
  );
});
