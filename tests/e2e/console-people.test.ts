// The console's administration area, API keys, tenants and environments, and the profile page, in a real browser
// (Debian's chromium, playwright-core) against the local stack: a key made with "Read only" by keyboard alone works
// over the API with read permissions only and its expiry is listed; tenants and environments made, renamed and deleted
// from the page and read back, a tenant admin's refused change shown; two-factor turned on from the profile with the
// TOTP computed from the secret the page shows, recovery codes shown once and one used to sign in; a password changed;
// "Sign out everywhere" ending another browser's session; every new page axe-clean at desktop and phone widths. Also
// the password endpoint's refusals over plain HTTP, each leaving the password as it was.
import { readFile } from 'node:fs/promises';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { launchChromium, seriousViolations, signInPage } from '../support/console.js';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const DESKTOP: BrowserContextOptions = { viewport: { width: 1100, height: 900 } };
const PHONE: BrowserContextOptions = {
  viewport: { width: 390, height: 844 },
  isMobile: true,
  hasTouch: true,
  deviceScaleFactor: 2,
};

let stack: Stack;
let browser: Browser;
let admin: string;
const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, body?: unknown, token = admin) =>
  api.call(method, `/api/v1${path}`, { token, body });

/** An operator with a password, created directly. */
const operator = async (name: string) => {
  const user = { email: `${name}@example.com`, password: `${name}-password` };
  await createUser(user.email, user.password, ['operator']);
  return user;
};

const totp = async (secret: string, step: number): Promise<string> => {
  const { generate } = await import('otplib');
  return generate({ secret, epoch: step * 30 + 1 });
};

const openSection = async (page: Page, label: string, heading: string) => {
  await page.goto(`${stack.baseUrl}/#/admin`);
  await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: label }).click();
  await page.getByRole('heading', { name: heading }).waitFor();
};

/** What has the keyboard focus: its tag, accessible text and class. */
const focused = (page: Page) =>
  page.evaluate(`(() => {
    const el = document.activeElement;
    return el === null ? { tag: 'body', text: '', cls: '' } : {
      tag: el.tagName.toLowerCase(),
      text: (el.getAttribute('aria-label') || el.textContent || '').trim(),
      cls: el.getAttribute('class') || '',
    };
  })()`) as Promise<{ tag: string; text: string; cls: string }>;

const tabTo = async (page: Page, wanted: (f: { tag: string; text: string }) => boolean, limit = 80) => {
  for (let i = 0; i < limit; i += 1) {
    await page.keyboard.press('Tab');
    if (wanted(await focused(page))) return;
  }
  throw new Error('not reached with Tab');
};

/** The page's width and the screen's: equal when nothing scrolls sideways. */
const widths = (page: Page) =>
  page.evaluate('({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth })') as Promise<{
    scroll: number;
    inner: number;
  }>;

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startStack({ port: 0, namePrefix: `${uniqueName('conspeople')}-`, bootstrapAdmin: ADMIN });
  admin = (await api.login(ADMIN)).token;
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe('the console: API keys', () => {
  it('creates a "Read only" key by keyboard: grouped permissions, the key shown once with Copy, read scopes only, its expiry listed', async () => {
    // Prepare
    const olga = await operator('olga');
    const olgaToken = (await api.login(olga)).token;
    const page = await signInPage(browser, stack.baseUrl, olga, {
      ...DESKTOP,
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    await openSection(page, 'API keys', 'Your API keys');
    const form = page.getByRole('form', { name: 'New API key' });
    // Assess: the operator's permissions grouped by resource, only those she holds
    expect(await form.locator('fieldset.choices > legend').allTextContents()).toEqual([
      'Deployments',
      'Pending deployments',
      'Targets',
      'Actions',
      'Sequences',
      'Solutions',
      'Environments',
      'Tenants',
      'Freezes',
      'API keys',
      'Analysis',
    ]);
    expect(await form.getByRole('checkbox').count()).toBe(olgaPermissions.length);
    expect(await form.getByRole('checkbox', { name: 'users:read' }).count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);

    // Act: name, "Read only", 30 days, create: keyboard only
    await form.getByLabel('Name').focus();
    await page.keyboard.type('ci-read');
    await tabTo(page, (f) => f.tag === 'button' && f.text === 'Read only');
    await page.keyboard.press('Enter');
    await tabTo(page, (f) => f.tag === 'select');
    await page.keyboard.press('ArrowUp');
    expect(await form.getByLabel('Expires').inputValue()).toBe('30');
    await tabTo(page, (f) => f.tag === 'button' && f.text === 'Create key');
    await page.keyboard.press('Enter');

    // Assess: the key right below the button, with the focus on it, and a Copy button that copies it
    const key = page.getByTestId('full-key');
    await key.waitFor();
    const fullKey = ((await key.textContent()) ?? '').trim();
    expect(fullKey).toMatch(/^dpl_/);
    expect((await focused(page)).cls).toContain('secret-once');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toMatchObject({ tag: 'button', text: 'Copy' });
    await page.keyboard.press('Enter');
    await page.getByText('Copied.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(fullKey);
    expect(await seriousViolations(page)).toEqual([]);
    // Done: the page forgets it
    await page
      .getByRole('region', { name: /Your new key/ })
      .getByRole('button', { name: 'Done' })
      .click();
    expect(await page.getByTestId('full-key').count()).toBe(0);
    // the key has exactly the read permissions she holds
    const readOnly = olgaPermissions.filter((p) => p.endsWith(':read')).sort();
    const me = await call('GET', '/auth/me', undefined, fullKey);
    expect([me.status, [...(me.json.credential.scopes as string[])].sort()]).toEqual([200, readOnly]);
    expect((await call('GET', '/deployments', undefined, fullKey)).status).toBe(200);
    const before = (await call('GET', '/actions', undefined, olgaToken)).json.data.length as number;
    const write = await call(
      'POST',
      '/actions',
      { slug: 'nope', name: 'nope', version: { version: '1.0.0', script: 'true' } },
      fullKey,
    );
    expect([write.status, write.json.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    expect((await call('GET', '/actions', undefined, olgaToken)).json.data).toHaveLength(before);
    // its expiry, 30 days from now, as the API stores it and as the list shows it
    const listed = (await call('GET', '/auth/api-keys', undefined, olgaToken)).json.api_keys as {
      name: string;
      expires_at: string;
    }[];
    const expiresAt = Date.parse(listed.find((k) => k.name === 'ci-read')!.expires_at);
    expect(Math.abs(expiresAt - (Date.now() + 30 * 86_400_000))).toBeLessThan(5 * 60_000);
    const row = page.locator('tr', { hasText: 'ci-read' });
    const shown = await page.evaluate(`new Date(${expiresAt}).toLocaleDateString()`);
    expect(await row.getByTestId('key-expiry').textContent()).toContain(shown);
    expect(await row.getByTestId('key-expiry').textContent()).not.toContain('expired');

    // Act: an expired key of hers (written behind the service's back: the API never makes one), then a reload
    const { identityDeps } = await import('../../functions/shared/identity-wiring.js');
    const olgaId = me.json.id as string;
    await identityDeps().apiKeys.create({
      id: '0c0c0c0c-0c0c-4c0c-8c0c-0c0c0c0c0c0c',
      userId: olgaId,
      tenantId: null,
      name: 'old-expired',
      description: null,
      keyPrefix: 'dpl_oldexpir',
      keyHash: 'not-a-real-hash',
      scopes: ['deployments:read'],
      createdAt: '2026-01-01T00:00:00.000Z',
      expiresAt: '2026-02-01T00:00:00.000Z',
      lastUsedAt: null,
      lastUsedIp: null,
      revokedAt: null,
    });
    await openSection(page, 'API keys', 'Your API keys');
    // Assess: marked expired; the one-time key is gone for good
    await expect
      .poll(() => page.locator('tr', { hasText: 'old-expired' }).getByTestId('key-expiry').textContent())
      .toContain('expired');
    expect(await page.getByTestId('full-key').count()).toBe(0);
    expect(await page.content()).not.toContain(fullKey);

    // Act: revoke, confirmed in the page
    await row.getByRole('button', { name: 'Revoke key ci-read' }).click();
    await row.getByRole('button', { name: 'Confirm revoke key ci-read' }).click();
    // Assess
    await row.waitFor({ state: 'detached' });
    expect((await call('GET', '/auth/me', undefined, fullKey)).status).toBe(401);
    await page.context().close();
  }, 90_000);
});

/** What the operator role holds (decisions.md §3). */
const olgaPermissions = [
  ...['read', 'create', 'cancel', 'redeploy'].map((a) => `deployments:${a}`),
  'pending_deployments:read',
  'pending_deployments:cancel',
  ...['targets', 'actions', 'sequences', 'solutions'].flatMap((r) =>
    ['read', 'create', 'update', 'delete'].map((a) => `${r}:${a}`),
  ),
  'environments:read',
  'tenants:read',
  'freezes:read',
  'freezes:create',
  'api_keys:read',
  'api_keys:create',
  'api_keys:delete',
  'analysis:read',
];

describe('the console: tenants and environments', () => {
  it('creates, renames and deletes a tenant and an environment of it, each read back through the API', async () => {
    const page = await signInPage(browser, stack.baseUrl, ADMIN, DESKTOP);
    // Act: a tenant
    await openSection(page, 'Tenants', 'Tenants');
    const newTenant = page.getByRole('form', { name: 'New tenant' });
    await newTenant.getByLabel('Name').fill('Team Blue');
    await newTenant.getByLabel('Slug').fill('team-blue');
    await newTenant.getByRole('button', { name: 'Create tenant' }).click();
    await page.getByText('Tenant Team Blue created.').waitFor();
    const tenants = () =>
      call('GET', '/tenants?limit=100').then((r) => r.json.data as { id: string; name: string; slug: string }[]);
    const blue = (await tenants()).find((t) => t.slug === 'team-blue')!;
    expect(blue.name).toBe('Team Blue');
    // renamed
    await page.getByRole('button', { name: 'Edit tenant Team Blue' }).click();
    const editor = page.getByRole('form', { name: 'Edit tenant Team Blue' });
    await editor.getByLabel('Name').fill('Team Blue Ops');
    await editor.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Tenant Team Blue Ops saved.').waitFor();
    expect((await call('GET', `/tenants/${blue.id}`)).json.name).toBe('Team Blue Ops');
    expect(await seriousViolations(page)).toEqual([]);

    // Act: an environment of that tenant, by the tenant's name
    await openSection(page, 'Environments', 'Environments');
    const newEnvironment = page.getByRole('form', { name: 'New environment' });
    await newEnvironment.getByLabel('Name').fill('blue-staging');
    await newEnvironment.getByLabel('Tenant').selectOption({ label: 'Team Blue Ops' });
    await newEnvironment.getByRole('button', { name: 'Create environment' }).click();
    await page.getByText('Environment blue-staging created.').waitFor();
    const environments = () =>
      call('GET', '/environments?limit=100').then(
        (r) => r.json.data as { id: string; name: string; tenant_id: string | null }[],
      );
    const staging = (await environments()).find((e) => e.name === 'blue-staging')!;
    expect(staging.tenant_id).toBe(blue.id);
    const row = page.locator(`tr[data-environment-id="${staging.id}"]`);
    expect(await row.getByTestId('environment-tenant').textContent()).toBe('Team Blue Ops');
    // renamed
    await page.getByRole('button', { name: 'Rename environment blue-staging' }).click();
    const rename = page.getByRole('form', { name: 'Rename environment blue-staging' });
    await rename.getByLabel('Name').fill('blue-stage');
    await rename.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Environment blue-stage saved.').waitFor();
    expect((await call('GET', `/environments/${staging.id}`)).json).toMatchObject({
      name: 'blue-stage',
      tenant_id: blue.id,
    });
    expect(await seriousViolations(page)).toEqual([]);
    // deleted, after a confirmation in the page (a first press deletes nothing)
    await page.getByRole('button', { name: 'Delete environment blue-stage' }).click();
    expect((await call('GET', `/environments/${staging.id}`)).status).toBe(200);
    await page.getByRole('button', { name: 'Confirm delete environment blue-stage' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await call('GET', `/environments/${staging.id}`)).status).toBe(404);
    await openSection(page, 'Tenants', 'Tenants');
    await page.getByRole('button', { name: 'Delete tenant Team Blue Ops' }).click();
    await page.getByRole('button', { name: 'Confirm delete tenant Team Blue Ops' }).click();
    await page.getByText('Tenant Team Blue Ops deleted.').waitFor();
    expect((await call('GET', `/tenants/${blue.id}`)).status).toBe(404);
    await page.context().close();
  }, 90_000);

  it('shows the API’s refusal when a tenant admin renames what every tenant shares, which stays as it was', async () => {
    // Prepare: a tenant, a global environment, and an admin of that tenant
    const red = (await call('POST', '/tenants', { name: 'Team Red', slug: 'team-red' })).json.id as string;
    const shared = (await call('POST', '/environments', { name: 'production-shared' })).json.id as string;
    const tenantAdmin = { email: 'red-admin@example.com', password: 'red-admin-password' };
    await createUser(tenantAdmin.email, tenantAdmin.password, ['admin'], red);
    const page = await signInPage(browser, stack.baseUrl, tenantAdmin, DESKTOP);
    // Act: rename the global environment
    await openSection(page, 'Environments', 'Environments');
    expect(
      await page.locator(`tr[data-environment-id="${shared}"]`).getByTestId('environment-tenant').textContent(),
    ).toBe('Global (every tenant)');
    await page.getByRole('button', { name: 'Rename environment production-shared' }).click();
    const rename = page.getByRole('form', { name: 'Rename environment production-shared' });
    await rename.getByLabel('Name').fill('mine-now');
    await rename.getByRole('button', { name: 'Save' }).click();
    // Assess: the refusal, and nothing changed
    await page.getByRole('alert').waitFor();
    expect((await page.getByRole('alert').textContent())?.length).toBeGreaterThan(0);
    expect((await call('GET', `/environments/${shared}`)).json.name).toBe('production-shared');
    // Act: rename her own tenant (tenants are changed by global administrators only)
    await openSection(page, 'Tenants', 'Tenants');
    await page.getByRole('button', { name: 'Edit tenant Team Red' }).click();
    const editor = page.getByRole('form', { name: 'Edit tenant Team Red' });
    await editor.getByLabel('Name').fill('Team Red Rules');
    await editor.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').waitFor();
    expect((await call('GET', `/tenants/${red}`)).json.name).toBe('Team Red');
    await page.context().close();
  }, 60_000);
});

describe('the console: the profile', () => {
  it('turns two-factor on from the QR code’s secret, shows the recovery codes once, and signs in with one', async () => {
    // Prepare
    const tess = await operator('tess');
    const page = await signInPage(browser, stack.baseUrl, tess, DESKTOP);
    // Act: the profile, from her name in the header
    await page.getByRole('link', { name: tess.email }).click();
    await page.getByRole('heading', { name: 'Your profile' }).waitFor();
    await page.getByRole('button', { name: 'Set up two-factor' }).click();
    const secret = ((await page.getByTestId('totp-secret').textContent()) ?? '').trim();
    expect(secret).toMatch(/^[A-Z2-7]+=*$/);
    // the QR code is drawn
    const qr = page.getByRole('img', { name: /QR code/ });
    await expect
      .poll(() => qr.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth))
      .toBeGreaterThan(0);
    expect(await seriousViolations(page)).toEqual([]);
    const step = Math.floor(Date.now() / 30_000);
    const enable = page.getByRole('form', { name: 'Turn on two-factor' });
    await enable.getByLabel('Code from your authenticator app').fill(await totp(secret, step));
    await enable.getByRole('button', { name: 'Turn on two-factor' }).click();
    // Assess: ten codes shown once, with Copy and a download; ten left
    const shown = page.getByTestId('recovery-codes');
    await shown.waitFor();
    const codes = ((await shown.textContent()) ?? '').trim().split('\n');
    expect(codes).toHaveLength(10);
    await expect.poll(() => page.getByTestId('codes-left').textContent()).toBe('10');
    expect(
      await page.getByRole('region', { name: 'Your recovery codes' }).getByRole('button', { name: 'Copy' }).count(),
    ).toBe(1);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download as .txt' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('deployer-recovery-codes.txt');
    const file = await readFile((await download.path())!, 'utf8');
    for (const code of codes) expect(file).toContain(code);
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('region', { name: 'Your recovery codes' }).getByRole('button', { name: 'Done' }).click();
    expect(await page.getByTestId('recovery-codes').count()).toBe(0);

    // Act: sign out, then in with a recovery code
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByLabel('Email').fill(tess.email);
    await page.getByLabel('Password').fill(tess.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByLabel(/Code from your authenticator app/).fill(codes[0]!);
    await page.getByRole('button', { name: 'Verify' }).click();
    // Assess: back on her profile (the route it was on), one fewer left, and the codes are not shown again
    await page.getByRole('heading', { name: 'Your profile' }).waitFor();
    await expect.poll(() => page.getByTestId('codes-left').textContent()).toBe('9');
    expect(await page.getByTestId('recovery-codes').count()).toBe(0);
    // the used code does not work twice
    const pending = (await api.call('POST', '/api/v1/auth/login', { body: tess })).json.pending_token as string;
    const again = await api.call('POST', '/api/v1/auth/2fa/verify', {
      body: { pending_token: pending, code: codes[0] },
    });
    expect(again.status).toBe(401);

    // Act: new codes, with the next authenticator code
    const regenerate = page.getByRole('form', { name: 'New recovery codes' });
    await regenerate.getByLabel('Code from your authenticator app').fill(await totp(secret, step + 1));
    await regenerate.getByRole('button', { name: 'Issue new recovery codes' }).click();
    // Assess: ten new ones; the earlier ones are gone
    await expect.poll(() => page.getByTestId('codes-left').textContent()).toBe('10');
    const fresh = ((await page.getByTestId('recovery-codes').textContent()) ?? '').trim().split('\n');
    expect(fresh).toHaveLength(10);
    expect(fresh).not.toContain(codes[1]);
    await page.context().close();
  }, 90_000);

  it('changes the password (this browser stays signed in, another one is signed out) and refuses a wrong current one', async () => {
    // Prepare: pat signed in in two browsers
    const pat = await operator('pat');
    const here = await signInPage(browser, stack.baseUrl, pat, DESKTOP);
    const elsewhere = await signInPage(browser, stack.baseUrl, pat, DESKTOP);
    await here.getByRole('link', { name: pat.email }).click();
    const form = here.getByRole('form', { name: 'Change password' });
    // Act: a wrong current password
    await form.getByLabel('Current password').fill('not-my-password');
    await form.getByLabel('New password', { exact: true }).fill('pat-new-password');
    await form.getByLabel('Confirm the new password').fill('pat-new-password');
    await form.getByRole('button', { name: 'Change password' }).click();
    // Assess: refused, nothing changed
    await expect.poll(() => form.getByRole('alert').textContent()).toContain('current password');
    expect((await api.call('POST', '/api/v1/auth/login', { body: pat })).status).toBe(200);
    // Act: a confirmation that differs is caught in the page
    await form.getByLabel('Current password').fill(pat.password);
    await form.getByLabel('New password', { exact: true }).fill('pat-new-password');
    await form.getByLabel('Confirm the new password').fill('pat-new-passwrod');
    await form.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => form.getByRole('alert').textContent()).toContain('differ');
    // Act: the right one
    await form.getByLabel('Current password').fill(pat.password);
    await form.getByLabel('New password', { exact: true }).fill('pat-new-password');
    await form.getByLabel('Confirm the new password').fill('pat-new-password');
    await form.getByRole('button', { name: 'Change password' }).click();
    await form.getByText('Password changed.', { exact: false }).waitFor();
    // Assess: the old password no longer works, the new one does
    expect((await api.call('POST', '/api/v1/auth/login', { body: pat })).status).toBe(401);
    const fresh = { email: pat.email, password: 'pat-new-password' };
    expect((await api.call('POST', '/api/v1/auth/login', { body: fresh })).status).toBe(200);
    // this browser stays signed in (across a reload too); the other one is out
    await here.reload();
    await here.getByRole('heading', { name: 'Your profile' }).waitFor();
    await elsewhere.reload();
    await elsewhere.getByRole('heading', { name: 'Sign in to Deployer' }).waitFor();
    await here.context().close();
    await elsewhere.context().close();
  }, 90_000);

  it('"Sign out" (header) and "Sign out here" (profile) end this browser only; another browser stays in', async () => {
    // Prepare
    const sid = await operator('sid');
    const here = await signInPage(browser, stack.baseUrl, sid, DESKTOP);
    const elsewhere = await signInPage(browser, stack.baseUrl, sid, DESKTOP);
    await here.getByRole('link', { name: sid.email }).click();
    // Act: the profile's "Sign out here"
    await here.getByRole('button', { name: 'Sign out here' }).click();
    // Assess: this browser is out, across a reload (its refresh cookie is gone and revoked); the other is in
    await here.getByRole('heading', { name: 'Sign in to Deployer' }).waitFor();
    await here.reload();
    await here.getByRole('heading', { name: 'Sign in to Deployer' }).waitFor();
    await elsewhere.reload();
    await elsewhere.getByRole('link', { name: 'Queue' }).click();
    await elsewhere.getByRole('heading', { name: 'Queue' }).waitFor();
    // Act: the header's "Sign out" in the other browser, after a third one signed in
    const third = await signInPage(browser, stack.baseUrl, sid, DESKTOP);
    await elsewhere.getByRole('button', { name: 'Sign out', exact: true }).click(); // the header's
    await elsewhere.getByRole('heading', { name: 'Sign in to Deployer' }).waitFor();
    await elsewhere.reload();
    await elsewhere.getByRole('heading', { name: 'Sign in to Deployer' }).waitFor();
    await third.reload();
    await third.getByRole('link', { name: sid.email }).waitFor();
    for (const page of [here, elsewhere, third]) await page.context().close();
  }, 90_000);

  it('"Sign out everywhere" ends the session of another browser and every access token', async () => {
    // Prepare
    const sam = await operator('sam');
    const token = (await api.login(sam)).token;
    const here = await signInPage(browser, stack.baseUrl, sam, DESKTOP);
    const elsewhere = await signInPage(browser, stack.baseUrl, sam, DESKTOP);
    await here.getByRole('link', { name: sam.email }).click();
    // Act
    await here.getByRole('button', { name: 'Sign out everywhere' }).click();
    // Assess
    await here.getByRole('heading', { name: 'Sign in to Deployer' }).waitFor();
    expect((await call('GET', '/auth/me', undefined, token)).status).toBe(401);
    await elsewhere.getByRole('link', { name: 'Queue' }).click(); // its next call finds its session gone
    await elsewhere.getByRole('heading', { name: 'Sign in to Deployer' }).waitFor();
    await elsewhere.reload();
    await elsewhere.getByRole('heading', { name: 'Sign in to Deployer' }).waitFor();
    await here.context().close();
    await elsewhere.context().close();
  }, 60_000);
});

describe('the console: the new pages on a phone', () => {
  it('fits 390 px with no sideways scroll and is axe-clean on every new page', async () => {
    const page = await signInPage(browser, stack.baseUrl, ADMIN, PHONE);
    const found: Record<string, { scroll: number; inner: number; violations: string[] }> = {};
    const measure = async (name: string) => {
      found[name] = { ...(await widths(page)), violations: await seriousViolations(page) };
    };
    await page.goto(`${stack.baseUrl}/#/admin`);
    await page.getByRole('link', { name: 'Environments' }).first().waitFor();
    expect(await page.getByRole('navigation', { name: 'Administration' }).getByRole('link').allTextContents()).toEqual([
      'API keys',
      'Users',
      'Roles',
      'Tenants',
      'Environments',
      'Identity providers',
      'OAuth clients',
    ]);
    await measure('admin');
    await openSection(page, 'API keys', 'Your API keys');
    const form = page.getByRole('form', { name: 'New API key' });
    await form.getByLabel('Name').fill('phone-key-with-a-rather-long-name');
    await form.getByRole('button', { name: 'Everything I hold' }).tap();
    await form.getByRole('button', { name: 'Create key' }).tap();
    await page.getByTestId('full-key').waitFor();
    await measure('api keys, a key shown');
    await openSection(page, 'Tenants', 'Tenants');
    await page.getByRole('form', { name: 'New tenant' }).getByLabel('Name').fill('Phone Team');
    await page.getByRole('form', { name: 'New tenant' }).getByLabel('Slug').fill('phone-team');
    await page.getByRole('button', { name: 'Create tenant' }).tap();
    // What the page says, the notice or its refusal: a refusal fails here with its text, not after a silent wait.
    const tenants = page.getByRole('region', { name: 'Tenants' });
    const said = tenants.locator('p[role=status], p[role=alert]').first();
    await said.waitFor();
    expect(await said.textContent()).toBe('Tenant Phone Team created.');
    expect((await call('GET', '/tenants?limit=100')).json.data.map((t: { slug: string }) => t.slug)).toContain(
      'phone-team',
    );
    await measure('tenants');
    await openSection(page, 'Environments', 'Environments');
    await measure('environments');
    await openSection(page, 'Users', 'Users');
    await measure('users');
    await page.locator('header a.who').tap(); // the admin's name
    await page.getByRole('heading', { name: 'Your profile' }).waitFor();
    await page.getByRole('button', { name: 'Set up two-factor' }).tap();
    await page.getByTestId('totp-secret').waitFor();
    await measure('profile, two-factor set-up');
    // Assess
    expect(found).toEqual(
      Object.fromEntries(Object.keys(found).map((name) => [name, { scroll: 390, inner: 390, violations: [] }])),
    );
    await page.context().close();
  }, 90_000);
});

describe('POST /api/v1/auth/password over HTTP', () => {
  it('refuses without a session, with an API key, with a wrong current password or a short new one, and changes nothing', async () => {
    // Prepare
    const vic = await operator('vic');
    const token = (await api.login(vic)).token;
    const key = (await call('POST', '/auth/api-keys', { name: 'k', scopes: ['deployments:read'] }, token)).json
      .full_key as string;
    const body = { current_password: vic.password, new_password: 'vic-stolen-password' };
    // Act
    const anonymous = await api.call('POST', '/api/v1/auth/password', { body });
    const byKey = await call('POST', '/auth/password', body, key);
    const wrong = await call('POST', '/auth/password', { ...body, current_password: 'guess' }, token);
    const short = await call('POST', '/auth/password', { ...body, new_password: 'short' }, token);
    // Assess
    expect([anonymous.status, anonymous.json.error.code]).toEqual([401, 'MISSING_AUTH_HEADER']);
    expect([byKey.status, byKey.json.error.code]).toEqual([403, 'FORBIDDEN']);
    expect([wrong.status, wrong.json.error.details.fields[0].field]).toEqual([400, 'current_password']);
    expect([short.status, short.json.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect((await api.call('POST', '/api/v1/auth/login', { body: vic })).status).toBe(200);
    expect((await call('GET', '/auth/me', undefined, token)).status).toBe(200);
    // Act: the right one ends the earlier token and answers a new session with its cookie
    const changed = await call('POST', '/auth/password', body, token);
    expect(changed.status).toBe(200);
    expect(changed.headers.get('set-cookie')).toContain('deployer_refresh=');
    expect((await call('GET', '/auth/me', undefined, token)).status).toBe(401);
    expect((await call('GET', '/auth/me', undefined, changed.json.access_token as string)).status).toBe(200);
  }, 30_000);
});
