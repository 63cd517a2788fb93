// The web console in a real browser (Debian's chromium driven by playwright-core) against the local stack and its
// two real agents: sign in, open a deployment of the README's action on local-1 and local-2 and watch its grid and
// log turn green live, cancel a long one from its page, and the list's tabs follow a deployment live. Needs
// /usr/bin/chromium (`apt-get install chromium`; .ci/run installs it) or CHROMIUM_PATH; without it the test fails.
import { mkdtempSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalAgents, type LocalAgent } from '../../local/agents.js';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { launchChromium } from '../support/console.js';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const VIEWER = { email: 'viewer@example.com', password: 'viewer-password' };
/** Where screenshots go: SCREENSHOT_DIR=docs refreshes docs/console-*.png. */
const SHOTS = process.env['SCREENSHOT_DIR'] ?? mkdtempSync(join(tmpdir(), 'console-shots-'));

let stack: Stack;
let browser: Browser;
let admin: string;
let dir: string;
let agents: readonly LocalAgent[] = [];
const actions: Record<string, string> = {};
let targetIds: string[] = [];
const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { token: admin, body });

const signIn = async (
  user: { email: string; password: string },
  viewport = { width: 1100, height: 900 },
): Promise<Page> => {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  await page.goto(stack.baseUrl);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Deployments' }).waitFor();
  return page;
};

const deploy = async (slug: string): Promise<string> => {
  const created = await call('POST', '/deployments', { action_id: actions[slug], target_ids: targetIds });
  expect([created.status, created.json.error]).toEqual([201, undefined]);
  return created.json.deployment_id as string;
};

beforeAll(async () => {
  browser = await launchChromium(); // first: without a browser the file fails before starting anything
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('console')}-`,
    bootstrapAdmin: ADMIN,
    tableStreams: true,
  });
  admin = (await api.login(ADMIN)).token;
  dir = await mkdtemp(join(tmpdir(), 'deployer-console-'));
  agents = await startLocalAgents(stack, dir, () => undefined);
  await createUser(VIEWER.email, VIEWER.password, ['user']);
  const targets = (await call('GET', '/targets')).json as { data: { id: string; name: string }[] };
  targetIds = targets.data.filter((t) => ['local-1', 'local-2'].includes(t.name)).map((t) => t.id);
  expect(targetIds).toHaveLength(2);
  for (const [slug, script] of [
    ['hello', 'echo "hello from $(hostname)"; printf "\\033[32mgreen\\033[0m done\\n"'],
    ['long', 'echo started; sleep 60; echo never'],
    ['broken', 'echo preparing\ndeploytool-xyz --release 42'],
  ]) {
    const created = await call('POST', '/actions', { slug, name: slug, version: { version: '1.0.0', script } });
    expect(created.status).toBe(201);
    actions[slug!] = created.json.id as string;
  }
  {
    const created = await call('POST', '/actions', {
      slug: 'greet',
      name: 'greet',
      version: {
        version: '1.0.0',
        script: 'echo "hello $WHO"; test -n "$TOKEN"',
        variables: [
          { name: 'WHO', default: 'world' },
          { name: 'TOKEN', secret: true },
        ],
      },
    });
    expect(created.status).toBe(201);
    actions['greet'] = created.json.id as string;
  }
});

afterAll(async () => {
  await browser?.close();
  await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
  await stack?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('the console in a browser', () => {
  it('is served on the stack’s origin with a strict content security policy, small', async () => {
    const page = await fetch(stack.baseUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    // The page is never cached; its script and style are named by their contents, so they are cached for a year
    // (a browser can never run yesterday's script against today's page).
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const html = await page.text();
    const scriptPath = /src="(\/assets\/console-[A-Z0-9]+\.js)"/.exec(html)?.[1];
    const stylePath = /href="(\/assets\/console-[A-Z0-9]+\.css)"/.exec(html)?.[1];
    expect([scriptPath, stylePath]).not.toContain(undefined);
    const script = await fetch(`${stack.baseUrl}${scriptPath}`, { headers: { 'accept-encoding': 'identity' } });
    expect(script.headers.get('content-type')).toContain('javascript');
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(`${stack.baseUrl}${stylePath}`)).headers.get('cache-control')).toContain('immutable');
    // What the first page load runs: the entry and the chunks it imports statically (the pages opened less often
    // are chunks loaded on their first visit), each named by its contents and cached for a year.
    let firstLoad = 0;
    const seen = new Set<string>();
    const follow = async (path: string, text?: string): Promise<void> => {
      if (seen.has(path)) return;
      seen.add(path);
      const body = text ?? (await (await fetch(`${stack.baseUrl}${path}`)).text());
      firstLoad += Buffer.byteLength(body);
      for (const [, chunk] of body.matchAll(/from"\.\/(chunk-[A-Z0-9]+\.js)"/g)) await follow(`/assets/${chunk}`);
    };
    await follow(scriptPath!, await script.text());
    expect(seen.size).toBeGreaterThan(1);
    expect(firstLoad).toBeLessThan(100 * 1024);
    const lazy = /import\("\.\/(chunk-[A-Z0-9]+\.js)"\)/.exec(
      await (await fetch(`${stack.baseUrl}${scriptPath}`)).text(),
    );
    expect(lazy).not.toBeNull();
    expect((await fetch(`${stack.baseUrl}/assets/${lazy![1]}`)).headers.get('cache-control')).toContain('immutable');
    // The tab's icon, linked by the page and also at /favicon.ico (which browsers may ask for on their own).
    for (const path of ['/favicon.svg', '/favicon.ico']) {
      const icon = await fetch(`${stack.baseUrl}${path}`);
      expect([path, icon.status, icon.headers.get('content-type')]).toEqual([path, 200, 'image/svg+xml']);
    }
    // The API's own paths are untouched: an unknown one is still the API's 404 envelope.
    const unknown = await fetch(`${stack.baseUrl}/assets/nothing.js`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
  });

  it('refuses a wrong password with the API’s message, and signs in', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(stack.baseUrl);
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Invalid email or password');
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Deployments' }).waitFor();
    // A reload keeps the session through the refresh cookie; the access token was only in memory.
    await page.reload();
    await page.getByRole('heading', { name: 'Deployments' }).waitFor();
    await context.close();
  });

  it('shows a deployment to local-1 and local-2 turn green live: grid cells, colours in the log, state', async () => {
    const page = await signIn(ADMIN);
    const id = await deploy('hello');
    await page.goto(`${stack.baseUrl}/#/deployments/${id}`);
    await page.getByRole('heading', { name: 'hello' }).waitFor();
    await expect.poll(() => page.getByTestId('deployment-state').textContent(), { timeout: 30_000 }).toBe('success');
    const cells = page.locator('td[data-step-id]');
    expect(await cells.count()).toBe(2);
    expect(await cells.evaluateAll((tds) => tds.map((td) => td.getAttribute('data-state')))).toEqual([
      'completed',
      'completed',
    ]);
    const grid = await page.locator('table.grid').textContent();
    expect(grid).toContain('local-1');
    expect(grid).toContain('local-2');
    const log = page.getByRole('log');
    await expect.poll(() => log.textContent()).toContain('hello from');
    // ANSI colours are rendered as styled spans, not as escape codes.
    expect(await log.locator('span.ansi-green').first().textContent()).toBe('green');
    expect(await log.textContent()).not.toContain('\u001b[');
    await page.screenshot({ path: join(SHOTS, 'console-deployment.png') });
    // People, not ids (issue 30): the page and the list name who triggered it.
    expect(await page.locator('main').textContent()).toContain('by Administrator');
    // The list shows it, and its succeeded tab counts it.
    await page.goto(`${stack.baseUrl}/#/deployments`);
    await page.locator(`tr[data-deployment-id="${id}"]`).waitFor();
    expect(await page.locator(`tr[data-deployment-id="${id}"]`).textContent()).toContain('Administrator');
    await page.screenshot({ path: join(SHOTS, 'console-deployments.png') });
    await page.context().close();
  }, 60_000);

  it('cancels a long deployment from its page; a user without deployments:cancel is not offered the button', async () => {
    const id = await deploy('long');
    const viewer = await signIn(VIEWER);
    await viewer.goto(`${stack.baseUrl}/#/deployments/${id}`);
    await viewer.getByRole('heading', { name: 'long' }).waitFor();
    expect(await viewer.getByRole('button', { name: 'Cancel' }).count()).toBe(0);
    await viewer.context().close();

    const page = await signIn(ADMIN);
    await page.goto(`${stack.baseUrl}/#/deployments/${id}`);
    await expect.poll(() => page.getByRole('log').textContent(), { timeout: 30_000 }).toContain('started');
    page.once('dialog', (dialog) => void dialog.accept('stuck for a minute'));
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => page.getByTestId('deployment-state').textContent(), { timeout: 20_000 }).toBe('cancelled');
    const detail = await call('GET', `/deployments/${id}`);
    expect([detail.json.state, detail.json.cancel_reason]).toEqual(['cancelled', 'stuck for a minute']);
    // The page says what the API says (issue 38): no step left `running`, the reason once, the killed commands
    // listed as cancelled with no analysis awaited (none is made for a cancel); and the same after a reload.
    for (const reloaded of [false, true]) {
      if (reloaded) {
        await page.reload();
        await expect.poll(() => page.getByTestId('deployment-state').textContent()).toBe('cancelled');
      }
      await expect.poll(() => page.locator('td[data-state="running"]').count()).toBe(0);
      await expect.poll(() => page.locator('td[data-state="cancelled"]').count()).toBeGreaterThan(0);
      const text = (await page.locator('main').textContent()) ?? '';
      expect(text.split('stuck for a minute').length - 1).toBe(1);
      expect(text).not.toContain('Analysis pending');
      expect(text).not.toMatch(/: failed \(exit/);
    }
    // A finished deployment offers redeploy, which opens the new one.
    await page.getByRole('button', { name: 'Redeploy' }).click();
    await page.getByRole('button', { name: 'Redeploy now' }).click();
    await expect.poll(() => page.url()).not.toContain(id);
    await page.context().close();
  }, 90_000);

  it('creates a deployment from the form: live target count, preview, create, then its page', async () => {
    const page = await signIn(ADMIN);
    await page.getByRole('link', { name: 'New deployment' }).click();
    await page.getByLabel('Action', { exact: true }).selectOption({ label: 'hello (1.0.0)' });
    await page.getByLabel('Targets with tags').check();
    await page.getByLabel('Tags', { exact: true }).fill('role=web');
    await expect.poll(() => page.getByTestId('matching').textContent()).toBe('1 target matches');
    await page.getByLabel('Tags', { exact: true }).fill('role=web, role=db');
    await expect.poll(() => page.getByTestId('matching').textContent()).toBe('2 targets match');
    await page.getByRole('button', { name: 'Preview' }).click();
    await expect.poll(() => page.getByTestId('target-summary').textContent()).toContain('2 targets: 2 online');
    await page.screenshot({ path: join(SHOTS, 'console-new.png') });
    await page.getByRole('button', { name: 'Create deployment' }).click();
    await page.getByRole('heading', { name: 'hello' }).waitFor();
    await expect.poll(() => page.getByTestId('deployment-state').textContent(), { timeout: 30_000 }).toBe('success');
    await page.context().close();
  }, 60_000);

  it('shows a request queued at capacity 0 with why it waits, then dispatched', async () => {
    expect((await call('PUT', '/admin/orchestration', { instances: 0 })).status).toBe(200);
    try {
      const page = await signIn(ADMIN);
      const created = await call('POST', '/deployments', { action_id: actions['hello'], target_ids: targetIds });
      expect(created.status).toBe(202);
      const pendingId = created.json.pending_request_id as string;
      await page.getByRole('link', { name: 'Queue' }).click();
      const row = page.locator(`tr[data-pending-id="${pendingId}"]`);
      await row.waitFor({ timeout: 20_000 });
      // Why it waits says the capacity is 0 (not that every instance is busy), and the row says what is queued,
      // who queued it, and when in the reader's time (not the API's zone-less UTC text).
      await expect
        .poll(() => row.locator('.reason').textContent())
        .toBe('The orchestration capacity is 0: nothing starts until an administrator raises it');
      expect(await row.textContent()).toContain('Administrator');
      expect(await row.textContent()).toContain('hello 1.0.0 on 2 targets');
      const listed = (await call('GET', '/deployments/pending')).json as { id: string; queued_at: string }[];
      const queuedAt = listed.find((p) => p.id === pendingId)?.queued_at ?? '';
      expect(await row.textContent()).toContain(new Date(`${queuedAt.replace(' ', 'T')}Z`).toLocaleString('en-US'));
      await page.screenshot({ path: join(SHOTS, 'console-queue.png') });
      expect((await call('PUT', '/admin/orchestration', { instances: 4 })).status).toBe(200);
      const left = page.locator(`li[data-pending-id="${pendingId}"]`);
      await left.waitFor({ timeout: 30_000 });
      expect(await left.getAttribute('data-status')).toBe('dispatched');
      await page.context().close();
    } finally {
      await call('PUT', '/admin/orchestration', { instances: 4 });
    }
  }, 90_000);

  it('shows the action’s variables in the form and, under a freeze, its end in local time and the override', async () => {
    const page = await signIn(ADMIN);
    await page.getByRole('link', { name: 'New deployment' }).click();
    // The API's default order is the form's default.
    expect(await page.getByLabel('Order').inputValue()).toBe('sequential');
    await page.getByLabel('Action', { exact: true }).selectOption({ label: 'greet (1.0.0)' });
    const declared = page.getByTestId('declared-variables');
    await declared.waitFor();
    expect(await declared.locator('input[name="var-TOKEN"]').getAttribute('type')).toBe('password');
    expect(await declared.locator('input[name="var-WHO"]').getAttribute('placeholder')).toBe('world');
    await declared.locator('input[name="var-TOKEN"]').fill('form-secret');
    await page.getByLabel(/local-1/).check();

    const now = Date.now();
    const freeze = await call('POST', '/deployment-freezes', {
      name: 'console-freeze',
      start_time: new Date(now - 60_000).toISOString(),
      end_time: new Date(now + 3_600_000).toISOString(),
    });
    expect(freeze.status).toBe(201);
    try {
      await page.getByRole('button', { name: 'Preview' }).click();
      await page.getByRole('button', { name: 'Create deployment' }).click();
      const alert = page.getByRole('alert');
      await expect.poll(() => alert.textContent()).toContain('console-freeze, until');
      const endsAt = freeze.json.end_time as string;
      expect(await alert.locator('time').getAttribute('datetime')).toBe(endsAt);
      expect(await alert.textContent()).not.toContain('override_freeze');
      await alert.getByLabel('Reason to override the freeze').fill('hotfix from the console');
      await alert.getByRole('button', { name: 'Override the freeze and create' }).click();
      await page.getByRole('heading', { name: 'greet' }).waitFor();
      await expect.poll(() => page.getByTestId('deployment-state').textContent(), { timeout: 30_000 }).toBe('success');
      const id = page.url().split('/').pop() ?? '';
      const created = await call('GET', `/deployments/${id}`);
      expect(created.json.freeze_override).toMatchObject({ reason: 'hotfix from the console' });
      expect(created.json.config).toMatchObject({ target_mode: 'sequential', variables: { TOKEN: '***' } });
    } finally {
      await call('DELETE', `/deployment-freezes/${freeze.json.id as string}`);
    }
    await page.context().close();
  }, 90_000);

  it('shows a failing command’s analysis on its deployment’s page', async () => {
    const page = await signIn(ADMIN);
    const id = await deploy('broken');
    await page.goto(`${stack.baseUrl}/#/deployments/${id}`);
    await expect.poll(() => page.getByTestId('deployment-state').textContent(), { timeout: 30_000 }).toBe('failed');
    const analysis = page.locator('.result .analysis').first();
    await analysis.waitFor({ timeout: 30_000 });
    expect(await analysis.textContent()).toContain('deploytool-xyz');
    await page.screenshot({ path: join(SHOTS, 'console-failure.png'), fullPage: true });
    await page.context().close();
  }, 60_000);

  it('lists the targets live and gives an enrollment command to copy', async () => {
    const page = await signIn(ADMIN);
    await page.getByRole('link', { name: 'Targets' }).click();
    const row = page.locator('tr', { hasText: 'local-1' });
    await row.waitFor();
    expect(await row.locator('.state').textContent()).toBe('online');
    await page.getByLabel('Name').fill('web-9');
    await page.getByLabel('Tags').fill('role=web');
    await page.getByRole('button', { name: 'Create an enrollment token' }).click();
    const command = await page.getByTestId('agent-command').textContent();
    expect(command).toMatch(
      /^curl -fsSL (http:\/\/localhost:\d+)\/agent\/install\.sh \| sudo sh -s -- --server \1 --enroll det_\S+ --name web-9$/,
    );
    await page.screenshot({ path: join(SHOTS, 'console-targets.png') });
    await page.context().close();
  }, 60_000);

  it('shows the catalog: an action’s versions with their script', async () => {
    const page = await signIn(VIEWER);
    await page.getByRole('link', { name: 'Catalog' }).click();
    await page.locator(`tr[data-action-id="${actions['hello']}"]`).getByRole('link', { name: 'hello' }).click();
    await page.getByRole('heading', { name: 'hello', level: 1 }).waitFor();
    await expect.poll(() => page.locator('pre').first().textContent()).toContain('hello from $(hostname)');
    // A user without users:read or roles:read still manages their own API keys, and sees no user list.
    await page.getByRole('link', { name: 'Administration' }).click();
    await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'Your API keys' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Users' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Users' }).count()).toBe(0);
    await page.context().close();
  }, 60_000);

  it('creates an API key with scopes the user holds, shows it once, and revokes it', async () => {
    const page = await signIn(VIEWER);
    await page.getByRole('link', { name: 'Administration' }).click();
    await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name').fill('ci');
    await page.getByLabel('deployments:read', { exact: true }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('full-key').textContent()) ?? '';
    const me = await fetch(`${stack.baseUrl}/api/v1/auth/me`, { headers: { authorization: `Bearer ${key}` } });
    expect(me.status).toBe(200);
    const row = page.locator('tr', { hasText: 'ci' });
    expect(await row.textContent()).toContain('deployments:read');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Confirm revoke key ci' }).click();
    await expect
      .poll(
        async () =>
          (await fetch(`${stack.baseUrl}/api/v1/auth/me`, { headers: { authorization: `Bearer ${key}` } })).status,
      )
      .toBe(401);
    await page.context().close();
  }, 60_000);

  it('redeploys with a changed variable, a secret masked and kept', async () => {
    const created = await call('POST', '/deployments', {
      action_id: actions['greet'],
      target_ids: targetIds.slice(0, 1),
      variables: { WHO: 'world', TOKEN: 's3cret-token-value' },
    });
    expect(created.status).toBe(201);
    const id = created.json.deployment_id as string;
    await expect
      .poll(async () => (await call('GET', `/deployments/${id}`)).json.state, { timeout: 30_000 })
      .toBe('success');
    const page = await signIn(ADMIN);
    // Every state the badge shows, from the page's start: an ended deployment's replayed history must not move it
    // back through `running` (that unmounted an open redeploy form and dropped what was typed in it).
    await page.evaluate(`(() => {
      const seen = [];
      window.seenStates = seen;
      new MutationObserver(() => {
        const text = document.querySelector('[data-testid="deployment-state"]')?.textContent ?? '';
        if (text !== '' && seen.at(-1) !== text) seen.push(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    })()`);
    await page.goto(`${stack.baseUrl}/#/deployments/${id}`);
    await expect.poll(() => page.getByRole('log').textContent(), { timeout: 15_000 }).toContain('hello world');
    await page.getByRole('status').filter({ hasText: 'Finished' }).waitFor();
    expect(await page.evaluate<string[]>('window.seenStates')).toEqual(['success']);
    await page.getByRole('button', { name: 'Redeploy' }).click();
    const secret = page.getByLabel('TOKEN');
    expect([await secret.getAttribute('type'), await secret.inputValue()]).toEqual(['password', '']);
    expect(await page.content()).not.toContain('s3cret-token-value');
    await page.getByLabel('WHO').fill('again');
    await page.getByRole('button', { name: 'Redeploy now' }).click();
    await expect.poll(() => page.url()).not.toContain(id);
    // The new deployment ran with the changed value and the kept secret (its script fails without TOKEN).
    const next = decodeURIComponent(page.url().split('#/deployments/')[1] ?? '');
    await expect
      .poll(async () => (await call('GET', `/deployments/${next}`)).json.state, { timeout: 30_000 })
      .toBe('success');
    await expect.poll(() => page.getByRole('log').textContent(), { timeout: 15_000 }).toContain('hello again');
    await expect.poll(() => page.getByTestId('deployment-state').textContent(), { timeout: 10_000 }).toBe('success');
    await page.context().close();
  }, 90_000);

  it('on a 390 px phone: deploys with variables from the form, watches it, redeploys with a change, cancels one', async () => {
    // The day-one deployment chain from the console alone, at phone width (issue 38, "Done when")
    const page = await signIn(ADMIN, { width: 390, height: 844 });
    const overflow = () =>
      page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    const state = () => page.getByTestId('deployment-state').textContent();
    const shownId = () => decodeURIComponent(page.url().split('#/deployments/')[1] ?? '');
    // Act: a deployment of greet with both variables typed in the form
    await page.getByRole('link', { name: 'New deployment' }).click();
    await page.getByLabel('Action', { exact: true }).selectOption({ label: 'greet (1.0.0)' });
    const declared = page.getByTestId('declared-variables');
    await declared.locator('input[name="var-WHO"]').fill('phone');
    await declared.locator('input[name="var-TOKEN"]').fill('phone-secret');
    await page.getByLabel(/local-1/).check();
    expect(await overflow()).toBe(0);
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('button', { name: 'Create deployment' }).click();
    // Assess: watched live to its end, the value in the log, the secret masked in the API
    await page.getByRole('heading', { name: 'greet' }).waitFor();
    await expect.poll(() => page.getByRole('log').textContent(), { timeout: 30_000 }).toContain('hello phone');
    await expect.poll(state, { timeout: 30_000 }).toBe('success');
    expect(await overflow()).toBe(0);
    const first = shownId();
    expect((await call('GET', `/deployments/${first}`)).json.config.variables).toEqual({ WHO: 'phone', TOKEN: '***' });
    // Act: redeploy with a changed value (the secret kept)
    await page.getByRole('button', { name: 'Redeploy' }).click();
    await page.getByLabel('WHO').fill('phone again');
    await page.getByRole('button', { name: 'Redeploy now' }).click();
    await expect.poll(() => page.url()).not.toContain(first);
    await expect.poll(() => page.getByRole('log').textContent(), { timeout: 30_000 }).toContain('hello phone again');
    await expect.poll(state, { timeout: 30_000 }).toBe('success');
    // Act: a long one, cancelled from its page
    await page.getByRole('link', { name: 'New deployment' }).click();
    await page.getByLabel('Action', { exact: true }).selectOption({ label: 'long (1.0.0)' });
    await page.getByLabel(/local-1/).check();
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('button', { name: 'Create deployment' }).click();
    await page.getByRole('heading', { name: 'long' }).waitFor();
    await expect.poll(() => page.getByRole('log').textContent(), { timeout: 30_000 }).toContain('started');
    page.once('dialog', (dialog) => void dialog.accept('cancelled from a phone'));
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(state, { timeout: 20_000 }).toBe('cancelled');
    expect(await overflow()).toBe(0);
    const cancelled = (await call('GET', `/deployments/${shownId()}`)).json;
    expect([cancelled.state, cancelled.cancel_reason]).toEqual(['cancelled', 'cancelled from a phone']);
    await page.context().close();
  }, 150_000);

  it('shows hostile text as text: no markup runs, no link is followed, no CSP violation (security.md, console rule 4)', async () => {
    const hostile = '<img src=x onerror=alert(1)>';
    const printed = [
      hostile,
      '</script><script>alert(2)</script>',
      '\u001b[31mred\u001b[0m \u001b]8;;http://evil.example/\u001b\\link\u001b]8;;\u001b\\',
    ];
    const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
    const created = await call('POST', '/actions', {
      slug: 'hostile-console',
      name: hostile,
      description: hostile,
      version: { version: '1.0.0', script: printed.map((line) => `printf '%s\\n' ${quote(line)}`).join('\n') },
    });
    expect(created.status).toBe(201);
    // The triggerer's display name is hostile too (shown in the page and the list, issue 30).
    const me = (await call('GET', '/auth/me')).json.id as string;
    expect((await call('PATCH', `/admin/users/${me}`, { display_name: hostile })).status).toBe(200);
    const deployed = await call('POST', '/deployments', {
      action_id: created.json.id,
      target_ids: targetIds.slice(0, 1),
    }).finally(() => call('PATCH', `/admin/users/${me}`, { display_name: 'Administrator' }));
    expect(deployed.status).toBe(201);
    expect(deployed.json.deployment.triggered_by_name).toBe(hostile);
    const id = deployed.json.deployment_id as string;

    const context = await browser.newContext();
    // Recorded from before the page's first script (the test's own code runs in Node, without the DOM's types).
    await context.addInitScript({
      content:
        'window.cspViolations = []; document.addEventListener("securitypolicyviolation", ' +
        '(e) => window.cspViolations.push(e.violatedDirective + " " + e.blockedURI));',
    });
    const page = await context.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await page.goto(stack.baseUrl);
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Deployments' }).waitFor();
    await page.goto(`${stack.baseUrl}/#/deployments/${id}`);
    await expect.poll(() => page.getByTestId('deployment-state').textContent(), { timeout: 30_000 }).toBe('success');
    const log = page.getByRole('log');
    await expect.poll(() => log.textContent()).toContain(hostile);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(hostile);
    expect(await log.textContent()).toContain('</script><script>alert(2)</script>');
    expect(await log.textContent()).toContain('red link');
    expect(await log.textContent()).not.toContain('evil.example');
    expect(await page.locator('main').textContent()).toContain(`by ${hostile}`);
    expect(await page.locator('img').count()).toBe(0);
    await page.goto(`${stack.baseUrl}/#/deployments`);
    await expect.poll(() => page.locator(`tr[data-deployment-id="${id}"]`).textContent()).toContain(hostile);
    expect(await page.locator('img').count()).toBe(0);
    await page.getByRole('link', { name: 'Catalog' }).click();
    await expect.poll(() => page.locator('main').textContent()).toContain(hostile);
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('main script').count()).toBe(0);
    expect(dialogs).toEqual([]);
    expect(await page.evaluate('window.cspViolations')).toEqual([]);
    expect(requests.filter((url) => !url.startsWith(stack.baseUrl))).toEqual([]);
    await context.close();
  }, 90_000);

  it('updates a row and the counts of the list live from the stream, without reading the list again', async () => {
    const page = await signIn(ADMIN);
    await page.getByRole('tab', { name: /^succeeded/ }).waitFor();
    const succeeded = async () =>
      Number(
        await page
          .getByRole('tab', { name: /^succeeded/ })
          .locator('.count')
          .textContent(),
      );
    await expect.poll(succeeded).not.toBeNaN();
    const before = await succeeded();
    const listReads: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/api/v1/deployments') listReads.push(request.url());
    });
    const id = await deploy('hello');
    const row = page.locator(`tr[data-deployment-id="${id}"]`);
    await row.waitFor({ timeout: 20_000 });
    await expect.poll(() => row.locator('.state').textContent(), { timeout: 30_000 }).toBe('success');
    await expect.poll(succeeded).toBe(before + 1);
    // Each list read costs the index partition; the stream's events are enough to place a new deployment.
    expect(listReads).toEqual([]);
    await page.context().close();
  }, 60_000);
});
