// The console's accessibility and phone layout, in a real browser (Debian's chromium, playwright-core) against the
// local stack and its two real agents: axe-core (the npm package, its source evaluated in the page: the console's
// CSP forbids inline script and nothing is fetched from elsewhere) finds no serious or critical violation on any
// main page, in the light and the dark colour scheme; sign-in, opening a deployment and cancelling it work with the
// keyboard alone, the focus visible at each step; at a phone's 390x844 no main page scrolls sideways and every
// navigation entry is on the screen.
import { mkdtempSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startLocalAgents, type LocalAgent } from '../../local/agents.js';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { launchChromium, seriousViolations, signInPage } from '../support/console.js';
import { apiClient } from '../support/http.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
/** Where screenshots go: SCREENSHOT_DIR=docs refreshes docs/console-phone.png. */
const SHOTS = process.env['SCREENSHOT_DIR'] ?? mkdtempSync(join(tmpdir(), 'console-shots-'));
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };

let stack: Stack;
let browser: Browser;
let admin: string;
let dir: string;
let agents: readonly LocalAgent[] = [];
let finished: string; // a deployment that succeeded
const actions: Record<string, string> = {};
let targetIds: string[] = [];
const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { token: admin, body });

const deploy = async (slug: string): Promise<string> => {
  const created = await call('POST', '/deployments', { action_id: actions[slug], target_ids: targetIds });
  expect([created.status, created.json.error]).toEqual([201, undefined]);
  return created.json.deployment_id as string;
};

/** The main pages: the route and what shows that the page has its data. */
const pages = (): { name: string; route: string; ready: (page: Page) => Promise<unknown> }[] => [
  {
    name: 'deployments',
    route: '#/deployments',
    ready: (p) => p.locator(`tr[data-deployment-id="${finished}"]`).waitFor(),
  },
  {
    name: 'a deployment',
    route: `#/deployments/${finished}`,
    ready: () => Promise.resolve(),
  },
  {
    name: 'new deployment',
    route: '#/deployments/new',
    ready: (p) => p.getByRole('heading', { name: 'New deployment' }).waitFor(),
  },
  { name: 'queue', route: '#/queue', ready: (p) => p.getByRole('heading', { name: 'Queue' }).waitFor() },
  { name: 'targets', route: '#/targets', ready: (p) => p.locator('tr', { hasText: 'local-1' }).waitFor() },
  {
    name: 'catalog',
    route: '#/catalog',
    ready: (p) => p.locator(`tr[data-action-id="${actions['hello']}"]`).waitFor(),
  },
  {
    name: 'freezes',
    route: '#/freezes',
    ready: (p) => p.getByRole('heading', { name: 'Freezes', level: 1 }).waitFor(),
  },
  { name: 'capacity', route: '#/capacity', ready: (p) => p.getByTestId('capacity-summary').waitFor() },
  { name: 'admin', route: '#/admin/users', ready: (p) => p.locator('tr', { hasText: ADMIN.email }).waitFor() },
  {
    name: 'admin, editing a user',
    route: '#/admin/users',
    ready: async (p) => {
      await p.getByRole('button', { name: `Edit ${ADMIN.email}` }).click();
      await p.getByRole('form', { name: `Edit ${ADMIN.email}` }).waitFor();
    },
  },
];

const open = async (page: Page, route: string, ready: (page: Page) => Promise<unknown>) => {
  await page.goto(`${stack.baseUrl}/${route}`);
  if (route.startsWith('#/deployments/') && route !== '#/deployments/new')
    await expect.poll(() => page.getByTestId('deployment-state').textContent(), { timeout: 30_000 }).toBe('success');
  await ready(page);
};

/** What has the keyboard focus: its tag, accessible text, and whether it shows a visible focus ring. */
const focused = (page: Page) =>
  page.evaluate(`(() => {
    const el = document.activeElement;
    if (el === null || el === document.body) return { tag: 'body', text: '', href: '', ring: false };
    const style = getComputedStyle(el);
    return {
      tag: el.tagName.toLowerCase(),
      text: (el.getAttribute('aria-label') || el.textContent || '').trim(),
      href: el.getAttribute('href') || '',
      ring: el.matches(':focus-visible') && style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
    };
  })()`) as Promise<{ tag: string; text: string; href: string; ring: boolean }>;

/** Presses Tab until `wanted` has the focus (at most `limit` times); every stop shows its focus ring. */
const tabTo = async (
  page: Page,
  wanted: (f: { tag: string; text: string; href: string }) => boolean,
  limit = 60,
): Promise<void> => {
  for (let i = 0; i < limit; i += 1) {
    await page.keyboard.press('Tab');
    const now = await focused(page);
    if (now.tag !== 'body') expect(now.ring, `no visible focus on ${now.tag} "${now.text}"`).toBe(true);
    if (wanted(now)) return;
  }
  throw new Error('not reached with Tab');
};

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startStack({ port: 0, namePrefix: `${uniqueName('consa11y')}-`, bootstrapAdmin: ADMIN });
  admin = (await api.login(ADMIN)).token;
  dir = await mkdtemp(join(tmpdir(), 'deployer-console-a11y-'));
  agents = await startLocalAgents(stack, dir, () => undefined);
  const targets = (await call('GET', '/targets')).json as { data: { id: string; name: string }[] };
  targetIds = targets.data.filter((t) => ['local-1', 'local-2'].includes(t.name)).map((t) => t.id);
  expect(targetIds).toHaveLength(2);
  for (const [slug, script] of [
    ['hello', 'echo "hello from $(hostname)"; printf "\\033[32mgreen\\033[0m done\\n"'],
    ['long', 'echo started; sleep 60; echo never'],
  ]) {
    const created = await call('POST', '/actions', { slug, name: slug, version: { version: '1.0.0', script } });
    expect(created.status).toBe(201);
    actions[slug!] = created.json.id as string;
  }
  finished = await deploy('hello');
  await vi.waitFor(async () => expect((await call('GET', `/deployments/${finished}`)).json.state).toBe('success'), {
    timeout: 30_000,
    interval: 250,
  });
});

afterAll(async () => {
  await browser?.close();
  await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
  await stack?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('the console’s accessibility and phone layout', () => {
  for (const colorScheme of ['light', 'dark'] as const)
    it(`has no serious or critical axe violation on any main page (${colorScheme})`, async () => {
      // The sign-in page
      const context = await browser.newContext({ colorScheme, viewport: { width: 1100, height: 900 } });
      const signIn = await context.newPage();
      await signIn.goto(stack.baseUrl);
      await signIn.getByLabel('Email').waitFor();
      const found: Record<string, string[]> = { 'sign-in': await seriousViolations(signIn) };
      // axe runs in this page despite its CSP, and sees a violation when there is one: a button without a name
      await signIn.evaluate('document.querySelector("form").append(document.createElement("button"))');
      expect((await seriousViolations(signIn)).join()).toContain('button-name');
      await context.close();
      // Every page signed in
      const page = await signInPage(browser, stack.baseUrl, ADMIN, {
        colorScheme,
        viewport: { width: 1100, height: 900 },
      });
      for (const { name, route, ready } of pages()) {
        await open(page, route, ready);
        found[name] = await seriousViolations(page);
      }
      // Assess: every page was checked, none has a violation
      expect(Object.keys(found)).toHaveLength(pages().length + 1); // the sign-in page and every main page
      expect(found).toEqual(Object.fromEntries(Object.keys(found).map((name) => [name, []])));
      await page.context().close();
    }, 120_000);

  it('signs in, opens a deployment and cancels it with the keyboard alone, the focus always visible', async () => {
    // Prepare
    const id = await deploy('long');
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    await page.goto(stack.baseUrl);
    await page.getByLabel('Email').waitFor();
    // Act: sign in
    await tabTo(page, (f) => f.tag === 'input');
    await page.keyboard.type(ADMIN.email);
    await page.keyboard.press('Tab');
    expect((await focused(page)).ring).toBe(true);
    await page.keyboard.type(ADMIN.password);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Deployments' }).waitFor();
    await page.locator(`tr[data-deployment-id="${id}"]`).waitFor();
    // open the deployment
    await tabTo(page, (f) => f.href === `#/deployments/${id}`, 120);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'long' }).waitFor();
    await expect.poll(() => page.getByRole('log').textContent(), { timeout: 30_000 }).toContain('started');
    // cancel it (the reason asked in a prompt, answered as a user would)
    page.once('dialog', (dialog) => void dialog.accept('by keyboard'));
    await tabTo(page, (f) => f.tag === 'button' && f.text === 'Cancel');
    await page.keyboard.press('Enter');
    // Assess
    await expect.poll(() => page.getByTestId('deployment-state').textContent(), { timeout: 20_000 }).toBe('cancelled');
    const detail = await call('GET', `/deployments/${id}`);
    expect([detail.json.state, detail.json.cancel_reason]).toEqual(['cancelled', 'by keyboard']);
    await context.close();
  }, 90_000);

  it('fits a phone: no main page scrolls sideways and the navigation is on the screen', async () => {
    // The sign-in page
    const context = await browser.newContext(PHONE);
    const signIn = await context.newPage();
    await signIn.goto(stack.baseUrl);
    await signIn.getByLabel('Email').waitFor();
    // A phone widens its layout viewport to what overflows (and zooms out): both stay at the screen's 390 px.
    const widths = (p: Page) =>
      p.evaluate(
        '({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth, wider: [...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > 391 && e.parentElement.getBoundingClientRect().right <= 391).slice(0, 5).map((e) => e.tagName + "." + e.className) })',
      ) as Promise<{ scroll: number; inner: number; wider: string[] }>;
    const wide: Record<string, { scroll: number; inner: number }> = {};
    const wider: Record<string, string[]> = {}; // elements past the edge, to say where an overflow comes from
    const measure = async (name: string, p: Page) => {
      const { scroll, inner, wider: past } = await widths(p);
      wide[name] = { scroll, inner };
      wider[name] = past;
    };
    await measure('sign-in', signIn);
    const offscreen: string[] = [];
    await context.close();
    const page = await signInPage(browser, stack.baseUrl, ADMIN, PHONE);
    for (const { name, route, ready } of pages()) {
      await open(page, route, ready);
      await measure(name, page);
      // every navigation entry and the sign-out button are on the screen
      const nav = page.getByRole('navigation', { name: 'Main' }).getByRole('link');
      expect(await nav.count()).toBe(8); // Freezes and Integrations joined the daily pages (issue 38)
      for (const control of [...(await nav.all()), page.getByRole('button', { name: 'Sign out' })]) {
        const box = await control.boundingBox();
        if (box === null || box.x < 0 || box.x + box.width > 390)
          offscreen.push(`${name}: ${await control.textContent()} at ${JSON.stringify(box)}`);
      }
      if (name === 'a deployment') await page.screenshot({ path: join(SHOTS, 'console-phone.png') });
    }
    // Assess: nothing is wider than the screen
    expect(wide, JSON.stringify(wider)).toEqual(
      Object.fromEntries(Object.keys(wide).map((name) => [name, { scroll: 390, inner: 390 }])),
    );
    expect(offscreen).toEqual([]);
    // and a navigation entry works by touch
    await page.getByRole('link', { name: 'Queue' }).tap();
    await page.getByRole('heading', { name: 'Queue' }).waitFor();
    await page.context().close();
  }, 120_000);
});
