// The console's live views over the viewer channel (issue 36), in Debian's chromium against the local stack and its
// real agents: a running deployment's lines arrive over the tab's one WebSocket (no EventSource), the list shares
// that socket, a socket dropped mid-deployment reconnects with every line shown once and in order, a revoked
// session closes the view within 5 s and says so, and a tab hidden past the pause time unsubscribes and catches up
// when it is shown again. Needs /usr/bin/chromium (or CHROMIUM_PATH); without it the test fails.
import type { Browser, Page, WebSocket, WebSocketRoute } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/console.js';
import { apiClient } from '../support/http.js';
import { ADMIN, useStackWithAgents } from '../support/stack-with-agents.js';
import { createUser } from '../support/users.js';

const e2e = useStackWithAgents('console-live', { tableStreams: true });
const VIEWER = { email: 'live-viewer@example.com', password: 'live-viewer-password' };
/** The agents' socket path, which the viewer channel shares (local/front.ts, AGENT_SOCKET_PATH). */
const SOCKET = /\/api\/v1\/agent\/socket/;
/** How many lines the ticking action prints, one every 250 ms. */
const TICKS = 40;

let browser: Browser;
let localOne: string;
const actions: Record<string, string> = {};
const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, body?: unknown, token = e2e.admin) =>
  api.call(method, `/api/v1${path}`, { token, body });

const deploy = async (slug: string): Promise<string> => {
  const created = await call('POST', '/deployments', { action_id: actions[slug], target_ids: [localOne] });
  expect([created.status, created.json.error]).toEqual([201, undefined]);
  return created.json.deployment_id as string;
};

/**
 * A page signed in through the form. `init` runs in the page before its script (a test's timing hook); `prepare`
 * gets the page before it loads (the tab's one socket opens with the first page, the list).
 */
const signIn = async (
  user: { email: string; password: string },
  { init, prepare }: { init?: string; prepare?: (page: Page) => Promise<void> } = {},
): Promise<Page> => {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  if (init !== undefined) await context.addInitScript({ content: init });
  const page = await context.newPage();
  await prepare?.(page);
  await page.goto(e2e.stack.baseUrl);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Deployments' }).waitFor();
  return page;
};

/** The tick numbers the log shows, in the order shown. */
const ticksOf = async (page: Page): Promise<number[]> =>
  (await page.getByRole('log').locator('.line').allTextContents()).flatMap((text) => {
    const match = /tick (\d+)$/.exec(text.trim());
    return match === null ? [] : [Number(match[1])];
  });

const ALL_TICKS = Array.from({ length: TICKS }, (_, i) => i + 1);

/** The JSON frames a page's socket sent. */
const framesSent = (socket: WebSocket): Record<string, unknown>[] => {
  const frames: Record<string, unknown>[] = [];
  socket.on('framesent', (frame) => frames.push(JSON.parse(String(frame.payload)) as Record<string, unknown>));
  return frames;
};

/** The page's WebSockets to the channel, and the requests of SSE streams it made. */
const watch = (page: Page) => {
  const sockets: { socket: WebSocket; sent: Record<string, unknown>[]; closed: boolean }[] = [];
  const streams: string[] = [];
  page.on('websocket', (socket) => {
    if (!SOCKET.test(socket.url())) return;
    const entry = { socket, sent: framesSent(socket), closed: false };
    socket.on('close', () => (entry.closed = true));
    sockets.push(entry);
  });
  page.on('request', (request) => {
    if (/\/logs(\?|$)|\/sse\//.test(new URL(request.url()).pathname + new URL(request.url()).search))
      streams.push(request.url());
  });
  return { sockets, streams };
};

/** Sets the page's visibility as a browser would when the tab is hidden or shown. */
const setHidden = (page: Page, hidden: boolean) =>
  page.evaluate(`(() => {
    const value = '${hidden ? 'hidden' : 'visible'}';
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => value });
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => value === 'hidden' });
    document.dispatchEvent(new Event('visibilitychange'));
  })()`);

const badge = (page: Page) => page.locator('.page-head span.live[role="status"]');

beforeAll(async () => {
  browser = await launchChromium();
  await createUser(VIEWER.email, VIEWER.password, ['user']);
  const targets = (await call('GET', '/targets')).json as { data: { id: string; name: string }[] };
  localOne = targets.data.find((t) => t.name === 'local-1')?.id ?? '';
  expect(localOne).not.toBe('');
  for (const [slug, script] of [
    ['ticks', `for i in $(seq 1 ${TICKS}); do echo "tick $i"; sleep 0.25; done`],
    ['long', 'echo started; sleep 60; echo never'],
  ]) {
    const created = await call('POST', '/actions', { slug, name: slug, version: { version: '1.0.0', script } });
    expect(created.status).toBe(201);
    actions[slug!] = created.json.id as string;
  }
});

afterAll(async () => {
  await browser?.close();
});

describe('the console’s live views over the viewer channel', () => {
  it('shows a running deployment’s lines live over one WebSocket, no EventSource, shared with the list', async () => {
    // Watched from before the sign-in: the list the sign-in lands on may open the page's one socket already.
    let seen: ReturnType<typeof watch> = { sockets: [], streams: [] };
    const page = await signIn(ADMIN, { prepare: async (tab) => void (seen = watch(tab)) });
    const id = await deploy('ticks');
    await page.goto(`${e2e.stack.baseUrl}/#/deployments/${id}`);
    // Live: lines come while the deployment runs, not at its end.
    await expect.poll(async () => (await ticksOf(page)).length, { timeout: 30_000 }).toBeGreaterThanOrEqual(3);
    expect(await page.getByTestId('deployment-state').textContent()).toBe('running');
    expect(await badge(page).textContent()).toBe('Live');
    await expect.poll(() => page.getByTestId('deployment-state').textContent(), { timeout: 30_000 }).toBe('success');
    await expect.poll(() => ticksOf(page)).toEqual(ALL_TICKS);
    await expect.poll(() => badge(page).textContent()).toBe('Finished');
    expect(seen.sockets).toHaveLength(1);
    expect(seen.sockets[0]!.socket.url()).toMatch(/\/api\/v1\/agent\/socket\?sse_token=/);
    expect(seen.sockets[0]!.sent).toContainEqual(
      expect.objectContaining({ action: 'subscribe', topic: 'deployment', deployment_id: id, last_event_id: 0 }),
    );
    // The list (same tab) subscribes on the same socket.
    await page.goto(`${e2e.stack.baseUrl}/#/deployments`);
    await page.locator(`tr[data-deployment-id="${id}"]`).waitFor();
    await expect
      .poll(() => seen.sockets[0]!.sent.some((f) => f['topic'] === 'resources' && f['resource_type'] === 'deployments'))
      .toBe(true);
    await expect.poll(() => badge(page).textContent()).toBe('Live');
    expect(seen.sockets).toHaveLength(1);
    expect(seen.streams).toEqual([]);
    await page.context().close();
  }, 90_000);

  it('reconnects a socket dropped mid-deployment with every line shown once, in order', async () => {
    // The page's socket goes through the test, which drops it from the server's side mid-deployment.
    const routes: { route: WebSocketRoute; sent: Record<string, unknown>[] }[] = [];
    const page = await signIn(ADMIN, {
      prepare: (tab) =>
        tab.routeWebSocket(SOCKET, (route) => {
          const server = route.connectToServer();
          const entry = { route, sent: [] as Record<string, unknown>[] };
          route.onMessage((message) => {
            entry.sent.push(JSON.parse(String(message)) as Record<string, unknown>);
            server.send(message);
          });
          routes.push(entry);
        }),
    });
    const id = await deploy('ticks');
    await page.goto(`${e2e.stack.baseUrl}/#/deployments/${id}`);
    await expect.poll(async () => (await ticksOf(page)).length, { timeout: 30_000 }).toBeGreaterThanOrEqual(8);
    expect(routes).toHaveLength(1);
    await routes[0]!.route.close({ code: 1011, reason: 'dropped by the test' });
    await expect.poll(() => badge(page).textContent()).toBe('Connecting…');
    await expect.poll(() => routes.length).toBe(2);
    await expect.poll(() => badge(page).textContent()).toBe('Live');
    // The new socket resumed after the last event the page applied (not from the start).
    const resumed = routes[1]!.sent.find((f) => f['action'] === 'subscribe' && f['deployment_id'] === id);
    expect(resumed?.['last_event_id']).toBeGreaterThan(8);
    await expect.poll(() => page.getByTestId('deployment-state').textContent(), { timeout: 30_000 }).toBe('success');
    await expect.poll(() => ticksOf(page)).toEqual(ALL_TICKS);
    await page.context().close();
  }, 90_000);

  it('closes the live view within 5 s of the session’s end, says so, and does not reconnect', async () => {
    // Watched from before the sign-in: the list the sign-in lands on may open the page's one socket already.
    let seen: ReturnType<typeof watch> = { sockets: [], streams: [] };
    const page = await signIn(VIEWER, { prepare: async (tab) => void (seen = watch(tab)) });
    const id = await deploy('long');
    try {
      // Running, its first line stored: the page's catch-up shows it.
      await expect
        .poll(async () => JSON.stringify((await call('GET', `/deployments/${id}/logs/history`)).json), {
          timeout: 30_000,
        })
        .toContain('started');
      await page.goto(`${e2e.stack.baseUrl}/#/deployments/${id}`);
      await expect.poll(() => page.getByRole('log').textContent(), { timeout: 30_000 }).toContain('started');
      await expect.poll(() => badge(page).textContent()).toBe('Live');
      // The user logs out everywhere (from another client): every token, the page's session with them.
      const { token } = await api.login(VIEWER);
      const started = Date.now();
      expect((await call('POST', '/auth/logout', undefined, token)).status).toBe(200);
      await expect.poll(() => badge(page).textContent(), { timeout: 5000, interval: 100 }).toContain('Session ended');
      expect(Date.now() - started).toBeLessThan(5000);
      await expect.poll(() => seen.sockets[0]?.closed).toBe(true);
      expect(await page.getByRole('button', { name: 'Sign in again' }).isVisible()).toBe(true);
      // No reconnect loop: past the first backoff steps, still the one socket.
      await page.waitForTimeout(4000);
      expect(seen.sockets).toHaveLength(1);
      expect(seen.streams).toEqual([]);
    } finally {
      await call('POST', `/deployments/${id}/cancel`, { reason: 'test cleanup' });
      await page.context().close();
    }
  }, 90_000);

  it('pauses a tab hidden past the pause time (unsubscribed, closed) and catches up when shown again', async () => {
    // The test shortens the minute to 1.5 s through the page's timing hook (live.ts).
    let seen: ReturnType<typeof watch> = { sockets: [], streams: [] };
    const page = await signIn(ADMIN, {
      init: 'window.__deployerLiveTiming = { pauseAfterMs: 1500 };',
      prepare: async (tab) => void (seen = watch(tab)),
    });
    const id = await deploy('ticks');
    await page.goto(`${e2e.stack.baseUrl}/#/deployments/${id}`);
    await expect.poll(async () => (await ticksOf(page)).length, { timeout: 30_000 }).toBeGreaterThanOrEqual(3);
    await setHidden(page, true);
    await expect.poll(() => badge(page).textContent()).toBe('Paused while the tab is hidden');
    await expect.poll(() => seen.sockets[0]?.closed).toBe(true);
    expect(seen.sockets[0]!.sent).toContainEqual(
      expect.objectContaining({ action: 'unsubscribe', topic: 'deployment', deployment_id: id }),
    );
    // Nothing arrives while paused, though the deployment runs on.
    const whilePaused = (await ticksOf(page)).length;
    await page.waitForTimeout(2000);
    expect((await ticksOf(page)).length).toBe(whilePaused);
    expect(whilePaused).toBeLessThan(TICKS);
    await setHidden(page, false);
    await expect.poll(() => seen.sockets.length).toBe(2);
    await expect.poll(() => badge(page).textContent(), { timeout: 30_000 }).toMatch(/^(Live|Finished)$/);
    const resumed = seen.sockets[1]!.sent.find((f) => f['action'] === 'subscribe' && f['deployment_id'] === id);
    expect(resumed?.['last_event_id']).toBeGreaterThan(whilePaused);
    await expect.poll(() => page.getByTestId('deployment-state').textContent(), { timeout: 30_000 }).toBe('success');
    await expect.poll(() => ticksOf(page)).toEqual(ALL_TICKS);
    expect(seen.streams).toEqual([]);
    await page.context().close();
  }, 90_000);
});
