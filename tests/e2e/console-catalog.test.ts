// The console's catalog editing, freezes and capacity pages (issue 38) in a real browser (Debian's chromium,
// playwright-core) against the local stack: an action built from the console with two versions (the first typed by
// keyboard only, Tab indenting in the script editor and Esc, Tab leaving it; the second with a required and a secret
// variable), a sequence and a solution composed and reordered, production frozen from the Freezes page and the
// new-deployment form refusing then offering the override, the capacity set to 0 and back from the page the Queue
// links to; each change read back over the API. A read-only user is offered no change, and the API still refuses
// it (state unchanged). Desktop and phone widths, axe clean on every page.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { launchChromium, seriousViolations, signInPage } from '../support/console.js';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const READER = { email: 'reader@example.com', password: 'reader-password' };
/** Where screenshots go: SCREENSHOT_DIR=docs refreshes docs/console-*.png. */
const SHOTS = process.env['SCREENSHOT_DIR'] ?? mkdtempSync(join(tmpdir(), 'console-catalog-shots-'));
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };

let stack: Stack;
let browser: Browser;
let admin: string;
let reader: string;
let environmentId: string;
let targetId: string;
/** Filled as the tests build them: the action and the sequence made from the console. */
const made: { actionId?: string; sequenceId?: string } = {};
const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, body?: unknown, token = admin) =>
  api.call(method, `/api/v1${path}`, { token, body });

/** What has the keyboard focus: tag, id, name attribute and accessible text. */
const focused = (page: Page) =>
  page.evaluate(`(() => {
    const el = document.activeElement;
    return {
      tag: el ? el.tagName.toLowerCase() : '',
      id: (el && el.id) || '',
      name: (el && el.getAttribute('name')) || '',
      text: el ? (el.getAttribute('aria-label') || el.textContent || '').trim() : '',
    };
  })()`) as Promise<{ tag: string; id: string; name: string; text: string }>;

/** Presses Tab until `wanted` has the focus (at most `limit` times). */
const tabTo = async (
  page: Page,
  wanted: (f: { tag: string; id: string; name: string; text: string }) => boolean,
  limit = 40,
) => {
  for (let i = 0; i < limit; i += 1) {
    await page.keyboard.press('Tab');
    if (wanted(await focused(page))) return;
  }
  throw new Error('not reached with Tab');
};

/**
 * The page's width on a 390 px phone (a mobile viewport widens itself to fit what overflows, so both must be 390),
 * and the first elements past the edge (but a table scrolling inside its wrapper), to say where an overflow comes from.
 */
const widths = (page: Page) =>
  page.evaluate(
    '({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth, wider: [...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > 391 && e.parentElement.getBoundingClientRect().right <= 391 && !e.parentElement.closest(\".table-scroll\")).slice(0, 5).map((e) => e.tagName + "." + e.className) })',
  ) as Promise<{ scroll: number; inner: number; wider: string[] }>;

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('conscat')}-`,
    bootstrapAdmin: ADMIN,
    tableStreams: true,
  });
  admin = (await api.login(ADMIN)).token;
  await createUser(READER.email, READER.password, ['user']);
  reader = (await api.login(READER)).token;
  // Production: a global environment with one target enrolled into it (no agent runs: it only has to exist).
  const environment = await call('POST', '/environments', { name: 'production' });
  expect(environment.status).toBe(201);
  environmentId = environment.json.id as string;
  const enrollment = await call('POST', '/targets/enrollment-tokens', { environment_id: environmentId });
  expect(enrollment.status).toBe(201);
  const registered = await api.call('POST', '/api/v1/agent/register', {
    body: {
      enrollment_token: enrollment.json.token,
      name: 'prod-1',
      hostname: 'prod-1.example',
      os: 'linux',
      arch: 'x64',
      agent_version: '1.0.0',
      tags: [],
    },
  });
  expect(registered.status).toBe(201);
  targetId = registered.json.target_id as string;
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe('the console: catalog, freezes and capacity', () => {
  it('builds an action by keyboard only (Tab indents in the script editor, Esc then Tab leaves it)', async () => {
    // Prepare
    const page = await signInPage(browser, stack.baseUrl, ADMIN);
    await page.goto(`${stack.baseUrl}/#/catalog`);
    await page.getByRole('heading', { name: 'Catalog' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    // Act: all by keyboard
    await page.locator('body').focus();
    await tabTo(page, (f) => f.tag === 'a' && f.text === 'New action');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'New action' }).waitFor();
    await tabTo(page, (f) => f.name === 'name');
    await page.keyboard.type('Deploy web');
    await page.keyboard.press('Tab');
    await page.keyboard.type('deploy-web');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Ships the web tier');
    await tabTo(page, (f) => f.id === 'new-action-script');
    await page.keyboard.type('if true; then\n');
    await page.keyboard.press('Tab'); // indents
    await page.keyboard.type('echo "v1"\nfi');
    expect(await focused(page)).toMatchObject({ id: 'new-action-script' });
    await page.keyboard.press('Escape');
    await page.keyboard.press('Tab'); // leaves
    expect(await focused(page)).toMatchObject({ id: 'new-action-rollback' });
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press('Escape'); // the rollback script is an editor too
    await tabTo(page, (f) => f.tag === 'button' && f.text === 'Create action');
    await page.keyboard.press('Enter');
    // Assess: on the action's page, and the API has it with the script as typed
    await page.getByRole('heading', { name: 'Deploy web', level: 1 }).waitFor();
    const id = decodeURIComponent(/#\/catalog\/actions\/(.+)$/.exec(page.url())![1]!);
    const action = await call('GET', `/actions/${id}`);
    expect(action.status).toBe(200);
    expect(action.json).toMatchObject({ slug: 'deploy-web', name: 'Deploy web', description: 'Ships the web tier' });
    expect(action.json.versions.map((v: { version: string; script: string }) => [v.version, v.script])).toEqual([
      ['1.0.0', 'if true; then\n  echo "v1"\nfi'],
    ]);
    made.actionId = id;
    await page.context().close();
  }, 90_000);

  it('adds a second version with a required and a secret variable, shows it read only, and shows a refusal', async () => {
    // Prepare
    const page = await signInPage(browser, stack.baseUrl, ADMIN);
    await page.goto(`${stack.baseUrl}/#/catalog/actions/${made.actionId}`);
    await page.getByRole('heading', { name: 'Deploy web', level: 1 }).waitFor();
    // Act: a new version, starting from 1.0.0's script
    await page.getByRole('button', { name: 'New version' }).click();
    const form = page.getByRole('form', { name: 'New version' });
    expect(await form.getByLabel('Version', { exact: true }).inputValue()).toBe('1.0.1');
    expect(await form.getByLabel('Script', { exact: true }).inputValue()).toContain('echo "v1"');
    await form.getByLabel('Version', { exact: true }).fill('1.1.0');
    await form.getByLabel('Script', { exact: true }).fill('echo "deploying $RELEASE"\ncurl -H "x-key: $API_KEY" x');
    await form.getByRole('button', { name: 'Add variable' }).click();
    const first = form.getByRole('group', { name: 'Variable 1' });
    await first.getByLabel('Name').fill('RELEASE');
    await first.getByLabel('Description').fill('The release tag');
    await first.getByLabel('Required').check();
    await form.getByRole('button', { name: 'Add variable' }).click();
    const second = form.getByRole('group', { name: 'Variable 2' });
    await second.getByLabel('Name').fill('API_KEY');
    await second.getByLabel('Default').fill('not kept');
    await second.getByLabel('Secret (masked').check();
    expect(await second.getByLabel('Default').isDisabled()).toBe(true);
    await form.getByLabel('Changelog (optional)').fill('Takes a release and a key');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'console-catalog-version.png'), fullPage: true });
    await form.getByRole('button', { name: 'Create version' }).click();
    // Assess: shown read only, and read back over the API
    await page.getByRole('status').filter({ hasText: 'Version 1.1.0 of Deploy web created.' }).waitFor();
    const shown = page.locator('section[data-version="1.1.0"]');
    expect(await shown.locator('pre').first().textContent()).toContain('deploying $RELEASE');
    expect(await shown.getByRole('row', { name: /RELEASE/ }).textContent()).toContain('required');
    expect(await shown.getByRole('row', { name: /API_KEY/ }).textContent()).toContain('secret');
    expect(await page.locator('textarea').count()).toBe(0); // nothing editable once created
    const detail = await call('GET', `/actions/${made.actionId}`);
    expect(detail.json.latest_version).toBe('1.1.0');
    expect(detail.json.versions[0]).toMatchObject({
      version: '1.1.0',
      changelog: 'Takes a release and a key',
      variables: [
        { name: 'RELEASE', description: 'The release tag', required: true, default: null, secret: false },
        { name: 'API_KEY', required: false, default: null, secret: true },
      ],
    });
    // A version that exists already: the API's refusal is shown, nothing changes
    await page.getByRole('button', { name: 'New version' }).click();
    await page.getByRole('form', { name: 'New version' }).getByLabel('Version', { exact: true }).fill('1.0.0');
    await page.getByRole('button', { name: 'Create version' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/1\.0\.0/);
    expect((await call('GET', `/actions/${made.actionId}/versions`)).json).toHaveLength(2);
    // Edit the name: read back
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('form', { name: 'Edit action Deploy web' }).getByLabel('Name').fill('Deploy the web tier');
    await page.getByRole('button', { name: 'Save action' }).click();
    await page.getByRole('heading', { name: 'Deploy the web tier', level: 1 }).waitFor();
    expect((await call('GET', `/actions/${made.actionId}`)).json.name).toBe('Deploy the web tier');
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  }, 90_000);

  it('composes a sequence and a solution, reorders the steps, and deletes after confirming in the page', async () => {
    // Prepare: a second action to order
    const smoke = await call('POST', '/actions', {
      slug: 'smoke-test',
      name: 'Smoke test',
      version: { version: '2.0.0', script: 'echo ok' },
    });
    expect(smoke.status).toBe(201);
    const page = await signInPage(browser, stack.baseUrl, ADMIN);
    await page.getByRole('link', { name: 'Catalog' }).click();
    // Act: the sequence
    await page.getByRole('link', { name: 'New sequence' }).click();
    const form = page.getByRole('form', { name: 'New sequence' });
    await form.getByLabel('Name').fill('Web release');
    await form.getByLabel(/^Step 1/).selectOption({ label: 'Smoke test' });
    await form.getByRole('button', { name: 'Add step' }).click();
    await form.getByLabel(/^Step 2/).selectOption({ label: 'Deploy the web tier' });
    await form.getByLabel('Version range of step 2').fill('^1.1');
    await form.getByRole('button', { name: 'Move step 2 up' }).click();
    expect(await seriousViolations(page)).toEqual([]);
    await form.getByRole('button', { name: 'Create sequence' }).click();
    await page.getByRole('heading', { name: 'Web release', level: 1 }).waitFor();
    // Assess: by name in the page, in order over the API
    const steps = page.locator('ol.members-view li');
    await expect.poll(() => steps.allTextContents()).toEqual(['Deploy the web tier ^1.1', 'Smoke test']);
    const sequenceId = decodeURIComponent(/#\/catalog\/sequences\/(.+)$/.exec(page.url())![1]!);
    const sequence = await call('GET', `/sequences/${sequenceId}`);
    expect(sequence.json).toMatchObject({
      name: 'Web release',
      version: '1.0.0',
      steps: [
        { order: 1, action_id: made.actionId, version_requirement: '^1.1' },
        { order: 2, action_id: smoke.json.id, version_requirement: null },
      ],
    });
    made.sequenceId = sequenceId;
    // Act: a solution of it, then deleted after confirming
    await page.getByRole('link', { name: 'Catalog' }).first().click();
    await page.getByRole('link', { name: 'New solution' }).click();
    const solutionForm = page.getByRole('form', { name: 'New solution' });
    await solutionForm.getByLabel('Name').fill('Web stack');
    await solutionForm.getByLabel(/^Sequence 1/).selectOption({ label: 'Web release' });
    await solutionForm.getByRole('button', { name: 'Create solution' }).click();
    await page.getByRole('heading', { name: 'Web stack', level: 1 }).waitFor();
    const solutionId = decodeURIComponent(/#\/catalog\/solutions\/(.+)$/.exec(page.url())![1]!);
    expect((await call('GET', `/solutions/${solutionId}`)).json.sequences).toEqual([
      { order: 1, sequence_id: sequenceId },
    ]);
    await page.getByRole('button', { name: 'Delete solution Web stack' }).click();
    expect((await call('GET', `/solutions/${solutionId}`)).status).toBe(200); // not before the confirm
    await page.getByRole('button', { name: 'Confirm delete solution Web stack' }).click();
    await page.getByRole('heading', { name: 'Catalog', level: 1 }).waitFor();
    expect((await call('GET', `/solutions/${solutionId}`)).status).toBe(404);
    // The catalog lists the sequence's steps by name
    await expect
      .poll(() => page.locator(`tr[data-id="${sequenceId}"]`).textContent())
      .toContain('Deploy the web tier ^1.1 → Smoke test');
    await page.context().close();
  }, 90_000);

  it('freezes production from the Freezes page; the new-deployment form refuses, then offers the override', async () => {
    // Prepare
    const page = await signInPage(browser, stack.baseUrl, ADMIN);
    await page.getByRole('link', { name: 'Freezes' }).click();
    await page.getByRole('heading', { name: 'Freezes', level: 1 }).waitFor();
    // Act: a freeze of production from now for two hours (the form's defaults)
    const form = page.getByRole('form', { name: 'New freeze' });
    await form.getByLabel('Name').fill('Release week');
    await form.getByLabel('Reason').fill('Black Friday');
    await form.getByLabel('Environment').selectOption({ label: 'production' });
    expect(await seriousViolations(page)).toEqual([]);
    await form.getByRole('button', { name: 'Create freeze' }).click();
    // Assess: in force now, its scope by name, and over the API
    const row = page.locator('table[aria-labelledby="freezes-active"] tr', { hasText: 'Release week' });
    await expect.poll(() => row.textContent()).toContain('environment production');
    expect(await form.getByLabel(/^Starts/).inputValue()).not.toBe(''); // a fresh form, its times filled
    const freezes = (await call('GET', '/deployment-freezes')).json.data as Record<string, unknown>[];
    expect(freezes).toHaveLength(1);
    const freeze = freezes[0]!;
    expect(freeze).toMatchObject({ name: 'Release week', reason: 'Black Friday', environment_id: environmentId });
    expect(freeze['active']).toBe(true);
    const hours = (Date.parse(String(freeze['end_time'])) - Date.parse(String(freeze['start_time']))) / 3600_000;
    expect(hours).toBe(2);
    expect(await row.textContent()).toMatch(/UTC|GMT/); // a local time with its zone
    await page.screenshot({ path: join(SHOTS, 'console-freezes.png'), fullPage: true });
    // Act: deploy to production from the form
    await page.getByRole('link', { name: 'New deployment' }).click();
    await page.getByLabel('Action', { exact: true }).selectOption({ label: 'Smoke test (2.0.0)' });
    await page.getByLabel('Environment').selectOption({ label: 'production' });
    await page.locator(`input[type="checkbox"][value="${targetId}"]`).check();
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('button', { name: 'Create deployment' }).click();
    // Assess: refused with the freeze by name, and an override offered to the admin
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toContain('Release week, until');
    expect((await call('GET', '/deployments')).json.data).toHaveLength(0);
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByLabel('Reason to override the freeze').fill('hotfix');
    await page.getByRole('button', { name: 'Override the freeze and create' }).click();
    await page.waitForURL(/#\/deployments\/[^n]/);
    const deployments = (await call('GET', '/deployments')).json.data as { id: string; environment_name: string }[];
    expect(deployments.map((d) => d.environment_name)).toEqual(['production']);
    expect((await call('POST', `/deployments/${deployments[0]!.id}/cancel`, { reason: 'test' })).status).toBe(200);
    // Act: end the freeze now, confirmed in the page
    await page.getByRole('link', { name: 'Freezes' }).click();
    await page.getByRole('button', { name: 'End now freeze Release week' }).click();
    await page.getByRole('button', { name: 'Confirm end freeze Release week' }).click();
    await page.getByRole('status').filter({ hasText: 'Freeze Release week ended.' }).waitFor();
    expect((await call('GET', `/deployment-freezes/${String(freeze['id'])}`)).json.active).toBe(false);
    await expect
      .poll(() => page.locator('table[aria-labelledby="freezes-past"]').textContent())
      .toContain('Release week');
    await page.context().close();
  }, 120_000);

  it('sets the capacity to 0 and back from the page the Queue links to, saying what 0 means', async () => {
    // Prepare
    const before = (await call('GET', '/admin/orchestration')).json.instances as number;
    expect(before).toBeGreaterThan(0);
    const page = await signInPage(browser, stack.baseUrl, ADMIN);
    await page.getByRole('link', { name: 'Queue' }).click();
    await page.getByRole('link', { name: 'Capacity' }).click();
    await page.getByRole('heading', { name: 'Capacity', level: 1 }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    const field = page.getByLabel('Deployments that may run at once');
    expect(await field.inputValue()).toBe(String(before));
    // Act
    await field.fill('0');
    await page.getByRole('button', { name: 'Set capacity' }).click();
    // Assess
    await expect.poll(() => page.getByTestId('capacity-summary').textContent()).toContain('The capacity is 0');
    expect((await call('GET', '/admin/orchestration')).json.instances).toBe(0);
    await field.fill(String(before));
    await page.getByRole('button', { name: 'Set capacity' }).click();
    await expect
      .poll(() => page.getByTestId('capacity-summary').textContent())
      .toContain(`${before} deployments may run at once`);
    expect((await call('GET', '/admin/orchestration')).json.instances).toBe(before);
    await page.context().close();
  }, 60_000);

  it('offers a read-only user no change anywhere, and the API still refuses one (nothing changes)', async () => {
    // Prepare
    const page = await signInPage(browser, stack.baseUrl, READER);
    // Assess: the catalog, an action, a sequence, the freezes and the capacity, without a change control
    await page.getByRole('link', { name: 'Catalog' }).click();
    await page.locator(`tr[data-action-id="${made.actionId}"]`).waitFor();
    expect(await page.locator('main section').getByRole('link', { name: /^New / }).count()).toBe(0);
    await page.goto(`${stack.baseUrl}/#/catalog/actions/${made.actionId}`);
    await page.locator('section[data-version="1.1.0"]').waitFor();
    expect(await page.locator('main section button').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await page.goto(`${stack.baseUrl}/#/catalog/sequences/${made.sequenceId}`);
    await page.getByRole('heading', { name: 'Web release', level: 1 }).waitFor();
    expect(await page.locator('main section button').count()).toBe(0);
    await page.getByRole('link', { name: 'Freezes' }).click();
    await page.locator('table[aria-labelledby="freezes-past"]').waitFor();
    expect(await page.locator('main section button, main section form').count()).toBe(0);
    await page.goto(`${stack.baseUrl}/#/capacity`);
    await page.getByTestId('capacity-summary').waitFor();
    expect(await page.locator('main section form, main section button').count()).toBe(0);
    // Act: what the page does not offer, straight at the API
    const capacity = (await call('GET', '/admin/orchestration')).json.instances;
    const refusals = [
      await call('PUT', '/admin/orchestration', { instances: 0 }, reader),
      await call('PUT', `/actions/${made.actionId}`, { name: 'mine' }, reader),
      await call('DELETE', `/sequences/${made.sequenceId}`, undefined, reader),
      await call(
        'POST',
        '/deployment-freezes',
        { name: 'x', start_time: new Date().toISOString(), end_time: new Date(Date.now() + 60_000).toISOString() },
        reader,
      ),
    ];
    // Assess: 403 with the envelope, and nothing changed
    for (const r of refusals) {
      expect(r.status).toBe(403);
      expect(typeof r.json.error.code).toBe('string');
    }
    expect((await call('GET', '/admin/orchestration')).json.instances).toBe(capacity);
    expect((await call('GET', `/actions/${made.actionId}`)).json.name).toBe('Deploy the web tier');
    expect((await call('GET', `/sequences/${made.sequenceId}`)).status).toBe(200);
    expect((await call('GET', '/deployment-freezes')).json.data).toHaveLength(1);
    await page.context().close();
  }, 90_000);

  it('fits a 390 px phone: catalog, action, sequence, freezes and capacity, axe clean', async () => {
    const page = await signInPage(browser, stack.baseUrl, ADMIN, PHONE);
    for (const [route, ready] of [
      ['#/catalog', () => page.locator(`tr[data-action-id="${made.actionId}"]`).waitFor()],
      ['#/catalog/actions/new', () => page.getByRole('heading', { name: 'New action' }).waitFor()],
      [`#/catalog/actions/${made.actionId}`, () => page.locator('section[data-version="1.1.0"]').waitFor()],
      [`#/catalog/sequences/${made.sequenceId}`, () => page.locator('ol.members-view li').first().waitFor()],
      ['#/catalog/solutions/new', () => page.getByRole('form', { name: 'New solution' }).waitFor()],
      ['#/freezes', () => page.locator('table[aria-labelledby="freezes-past"]').waitFor()],
      ['#/capacity', () => page.getByTestId('capacity-summary').waitFor()],
    ] as const) {
      await page.goto(`${stack.baseUrl}/${route}`);
      await ready();
      if (route === `#/catalog/actions/${made.actionId}`) {
        await page.getByRole('button', { name: 'New version' }).click();
        await page.getByRole('button', { name: 'Add variable' }).click();
      }
      await page.screenshot({
        path: join(SHOTS, `console-phone-${route.replace(/[^a-z]+/g, '-').replace(/-+$/, '')}.png`),
        fullPage: true,
      });
      const { scroll, inner, wider } = await widths(page);
      expect([route, scroll, inner, wider]).toEqual([route, 390, 390, []]);
      expect([route, await seriousViolations(page)]).toEqual([route, []]);
    }
    await page.context().close();
  }, 120_000);
});
