// The console's sign-in through an identity provider and its user and role administration, in a real browser
// (Debian's chromium, playwright-core) against the local stack and a small OpenID Connect provider on loopback:
// "Sign in with <provider>" from the public list lands signed in on the route it started from; a provider not trusted
// for 2FA leads to the code step; an admin creates a user with a role who then signs in, edits a role's permissions,
// deactivates and deletes a user; the API's refusal is shown; a caller with users:read only is offered no change.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { launchChromium, seriousViolations, signInPage } from '../support/console.js';
import { apiClient } from '../support/http.js';
import { startOidcProvider, type OidcProvider } from '../../local/oidc-provider.js';
import { createUser } from '../support/users.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const CLIENT = { clientId: 'deployer-console', clientSecret: 'idp-client-secret-1234567890' };
const PROVIDER = 'Corp SSO';

let stack: Stack;
let idp: OidcProvider;
let browser: Browser;
let admin: string;
let providerId: string;
const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, body?: unknown, token = admin) =>
  api.call(method, `/api/v1${path}`, { token, body });

/** A custom role with these permissions, and a user holding only it. */
const userWith = async (role: string, permissions: string[]) => {
  const created = await call('POST', '/admin/roles', { name: role });
  expect(created.status).toBe(201);
  expect((await call('POST', `/admin/roles/${created.json.id}/permissions`, { permissions })).status).toBe(204);
  const user = { email: `${role}@example.com`, password: `${role}-password` };
  await createUser(user.email, user.password, [role]);
  return user;
};

/** Administration, then one of its sections from the sub-navigation. */
const openAdmin = async (page: Page, section: 'Users' | 'Roles') => {
  await page.getByRole('link', { name: 'Administration' }).click();
  await page.getByRole('heading', { name: 'Administration' }).waitFor();
  await openSection(page, section);
};
const openSection = async (page: Page, section: 'Users' | 'Roles') => {
  await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: section }).click();
  await page.getByRole('heading', { name: section }).waitFor();
};

beforeAll(async () => {
  idp = await startOidcProvider(CLIENT);
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('consadm')}-`,
    bootstrapAdmin: ADMIN,
    env: { OIDC_ALLOWED_HOSTS: idp.host },
  });
  admin = (await api.login(ADMIN)).token;
  const provider = await call('POST', '/admin/identity-providers', {
    name: PROVIDER,
    ...idp.endpoints('corp'),
    client_id: CLIENT.clientId,
    client_secret: CLIENT.clientSecret,
    scopes: ['openid', 'email', 'profile', 'groups'],
    jit_provisioning: true,
    link_by_email: true,
  });
  expect(provider.status).toBe(201);
  providerId = provider.json.id as string;
  const mapping = await call('POST', `/admin/identity-providers/${providerId}/role-mappings`, {
    claim_value: 'deployers',
    role: 'operator',
  });
  expect(mapping.status).toBe(201);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await idp?.stop();
});

describe('the console: single sign-on and administration', () => {
  it('signs in with an identity provider from the sign-in page and comes back signed in to the route it was on', async () => {
    // Prepare
    idp.signIn({
      sub: 'carol-sub',
      email: 'carol@corp.example',
      email_verified: true,
      name: 'Carol Provider',
      groups: ['deployers'],
    });
    // The public list is kept up to 5 s per container: wait until it offers the provider.
    await expect
      .poll(async () => ((await call('GET', '/auth/sso')).json.data as { id: string }[]).map((p) => p.id), {
        timeout: 15_000,
      })
      .toContain(providerId);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${stack.baseUrl}/#/queue`);
    const link = page.getByRole('link', { name: `Sign in with ${PROVIDER}` });
    await link.waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    // Act
    await link.click();
    // Assess: the provider's group made her an operator, who sees the queue she asked for
    await page.getByRole('heading', { name: 'Queue' }).waitFor({ timeout: 20_000 });
    expect(new URL(page.url()).hash).toBe('#/queue');
    expect(await page.locator('.who').textContent()).toBe('Carol Provider');
    expect(await page.getByRole('link', { name: 'New deployment' }).count()).toBe(1);
    // a reload keeps the session (the refresh cookie the callback set)
    await page.reload();
    await page.getByRole('heading', { name: 'Queue' }).waitFor();
    await context.close();
  }, 60_000);

  it('asks for the 2FA code after a provider not trusted for it, keeps the pending token out of the URL, then signs in', async () => {
    // Prepare: an existing user with two-factor, linked by the provider through her verified email
    const { generate } = await import('otplib');
    const codeAt = (secret: string, step: number) => generate({ secret, epoch: step * 30 + 1 });
    await createUser('dave@corp.example', 'dave-password', ['user']);
    const token = (await api.login({ email: 'dave@corp.example', password: 'dave-password' })).token;
    const secret = (await call('POST', '/auth/2fa/setup', {}, token)).json.secret as string;
    const enabledStep = Math.floor(Date.now() / 30_000);
    const enabled = await call('POST', '/auth/2fa/enable', { code: await codeAt(secret, enabledStep) }, token);
    expect(enabled.json.two_factor_enabled).toBe(true);
    idp.signIn({ sub: 'dave-sub', email: 'dave@corp.example', email_verified: true });
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(stack.baseUrl);
    // Act
    await page.getByRole('link', { name: `Sign in with ${PROVIDER}` }).click();
    const code = page.getByLabel('Code from your authenticator app');
    await code.waitFor({ timeout: 20_000 });
    // Assess: not signed in yet, and the token is gone from the address bar
    expect(page.url()).not.toContain('pending_token');
    expect(await seriousViolations(page)).toEqual([]);
    expect(await page.getByRole('heading', { name: 'Deployments' }).count()).toBe(0);
    await code.fill(await codeAt(secret, enabledStep + 1));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Deployments' }).waitFor();
    expect(await page.locator('.who').textContent()).toBe('dave@corp.example');
    await context.close();
  }, 60_000);

  it('lets an admin create a user with a role who then signs in, edit a role’s permissions, deactivate and delete a user', async () => {
    const page = await signInPage(browser, stack.baseUrl, ADMIN);
    await openAdmin(page, 'Users');
    // Act: a new user with the operator role
    const newUser = page.getByRole('form', { name: 'New user' });
    await newUser.getByLabel('Email').fill('erin@example.com');
    await newUser.getByLabel('Username').fill('erin');
    await newUser.getByLabel('Display name').fill('Erin Example');
    await newUser.getByLabel('Password').fill('erin-password');
    await newUser.getByRole('checkbox', { name: 'operator', exact: true }).check();
    await newUser.getByRole('button', { name: 'Create user' }).click();
    // Assess
    await expect.poll(() => page.getByRole('status').first().textContent()).toBe('User erin@example.com created.');
    const erinRow = page.locator('tr', { hasText: 'erin@example.com' });
    expect(await erinRow.getByTestId('user-roles').textContent()).toBe('operator');
    const erin = await signInPage(browser, stack.baseUrl, { email: 'erin@example.com', password: 'erin-password' });
    expect(await erin.getByRole('link', { name: 'New deployment' }).count()).toBe(1);
    await erin.context().close();

    // Act: a role made in the page, then its permissions changed
    await openSection(page, 'Roles');
    const newRole = page.getByRole('form', { name: 'New role' });
    await newRole.getByLabel('Role name').fill('auditors');
    await newRole.getByRole('checkbox', { name: 'deployments:read', exact: true }).check();
    await newRole.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('button', { name: 'Edit role auditors' }).click();
    const editor = page.getByRole('form', { name: 'Edit role auditors' });
    await editor.getByRole('checkbox', { name: 'targets:read', exact: true }).check();
    await editor.getByRole('checkbox', { name: 'deployments:read', exact: true }).uncheck();
    await editor.getByLabel('Description').fill('Read the targets');
    await editor.getByRole('button', { name: 'Save role' }).click();
    await editor.waitFor({ state: 'detached' });
    // Assess: the API has the change
    const roles = (await call('GET', '/admin/roles?limit=100')).json.data as { id: string; name: string }[];
    const auditors = await call('GET', `/admin/roles/${roles.find((r) => r.name === 'auditors')!.id}`);
    expect([auditors.json.permissions, auditors.json.description]).toEqual([['targets:read'], 'Read the targets']);

    // Act: deactivate erin, with the new role instead of operator
    await openSection(page, 'Users');
    await page.getByRole('button', { name: 'Edit erin@example.com' }).click();
    const userEditor = page.getByRole('form', { name: 'Edit erin@example.com' });
    await userEditor.getByLabel('Status').selectOption('inactive');
    await userEditor.getByRole('checkbox', { name: 'operator', exact: true }).uncheck();
    await userEditor.getByRole('checkbox', { name: 'auditors', exact: true }).check();
    await userEditor.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => erinRow.getByTestId('user-status').textContent()).toBe('inactive');
    expect(await erinRow.getByTestId('user-roles').textContent()).toBe('auditors');
    const refused = await api.call('POST', '/api/v1/auth/login', {
      body: { email: 'erin@example.com', password: 'erin-password' },
    });
    expect(refused.status).toBe(401);
    // Act: delete her, confirmed in the page
    await page.getByRole('button', { name: 'Delete erin@example.com' }).click();
    await page.getByRole('button', { name: 'Confirm delete erin@example.com' }).click();
    await erinRow.waitFor({ state: 'detached' });
    const users = (await call('GET', '/admin/users?search=erin')).json.data as unknown[];
    expect(users).toEqual([]);
    await page.context().close();
  }, 90_000);

  it('shows the API’s refusal: a user manager cannot give a role stronger than their own; nothing else is offered', async () => {
    const manager = await userWith('user-managers', ['users:read', 'users:create', 'users:update', 'roles:read']);
    const page = await signInPage(browser, stack.baseUrl, manager);
    await openAdmin(page, 'Roles');
    // Assess: no role changes and no deletes are offered
    expect(await page.getByRole('form', { name: 'New role' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Edit role / }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Delete / }).count()).toBe(0);
    await openSection(page, 'Users');
    expect(await page.getByRole('button', { name: /^Delete / }).count()).toBe(0);
    // Act: a new user with the admin role
    const newUser = page.getByRole('form', { name: 'New user' });
    await newUser.getByLabel('Email').fill('frank@example.com');
    await newUser.getByLabel('Username').fill('frank');
    await newUser.getByLabel('Password').fill('frank-password');
    await newUser.getByRole('checkbox', { name: 'admin', exact: true }).check();
    await newUser.getByRole('button', { name: 'Create user' }).click();
    // Assess: the API's 403 and the permissions it says are missing
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toContain('This needs the permission');
    expect(await alert.textContent()).toContain('users:delete');
    expect((await call('GET', '/admin/users?search=frank')).json.data).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('offers no change to a caller who may only read users', async () => {
    const reader = await userWith('user-readers', ['users:read']);
    const page = await signInPage(browser, stack.baseUrl, reader);
    await openAdmin(page, 'Users');
    await page.locator('tr', { hasText: ADMIN.email }).waitFor();
    expect(await page.getByRole('button', { name: /^(Edit|Delete) / }).count()).toBe(0);
    expect(await page.getByRole('form', { name: 'New user' }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Roles' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Roles' }).count()).toBe(0);
    await page.context().close();
  }, 60_000);
});
