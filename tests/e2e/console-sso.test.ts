// The console's identity providers and OAuth clients pages, in a real browser (Debian's chromium, playwright-core)
// against the local stack and the small OpenID provider on loopback (local/oidc-provider.ts): an admin adds a provider
// from the page (endpoints read from its discovery document), maps a group to a role, and someone signs in with it in
// another browser; a provider that cannot be reached is refused with the reason shown; an OAuth client is created by
// keyboard on a phone, its secret shown once with Copy, rotated and deleted. Each change is read back through the API.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startOidcProvider, type OidcProvider } from '../../local/oidc-provider.js';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { launchChromium, seriousViolations, signInPage } from '../support/console.js';
import { apiClient } from '../support/http.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const CLIENT = { clientId: 'deployer-console-sso', clientSecret: 'idp-client-secret-0987654321' };
const DESKTOP = { viewport: { width: 1100, height: 900 } };
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };

let stack: Stack;
let idp: OidcProvider;
let browser: Browser;
let admin: string;
let closedHost: string;
const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, body?: unknown, token = admin) =>
  api.call(method, `/api/v1${path}`, { token, body });

const providers = async () =>
  (await call('GET', '/admin/identity-providers?limit=100')).json.data as {
    id: string;
    name: string;
    issuer: string;
    enabled: boolean;
    jit_provisioning: boolean;
    authorization_endpoint: string;
    linked_users: number;
  }[];

const openSection = async (page: Page, link: string) => {
  await page.getByRole('link', { name: 'Administration' }).click();
  await page.getByRole('heading', { name: 'Administration', exact: true }).waitFor();
  await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: link }).click();
  await page.getByRole('heading', { name: link, level: 2 }).waitFor();
};

/** Nothing wider than the viewport (tables scroll inside their wrapper). */
const pageWidth = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth');

beforeAll(async () => {
  idp = await startOidcProvider(CLIENT);
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  closedHost = `127.0.0.1:${(closed.address() as AddressInfo).port}`;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('conssso')}-`,
    bootstrapAdmin: ADMIN,
    env: { OIDC_ALLOWED_HOSTS: [idp.host, closedHost].join(',') },
  });
  admin = (await api.login(ADMIN)).token;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await idp?.stop();
});

describe('the console: identity providers and OAuth clients', () => {
  it('adds a provider from the page, maps a group to a role, and someone signs in with it in another browser', async () => {
    const page = await signInPage(browser, stack.baseUrl, ADMIN, DESKTOP);
    await openSection(page, 'Identity providers');
    expect(await seriousViolations(page)).toEqual([]);
    const realm = idp.endpoints('console');

    // Act: the issuer, "Read endpoints", the client, just-in-time provisioning
    const form = page.getByRole('form', { name: 'New identity provider' });
    await form.getByLabel('Name', { exact: true }).fill('Team SSO');
    await form.getByLabel('Issuer URL', { exact: true }).fill(realm.issuer);
    await form.getByRole('button', { name: 'Read endpoints' }).click();
    await form.getByText(`Endpoints read from ${realm.issuer}.`).waitFor();
    expect(await form.getByLabel('Token endpoint', { exact: true }).inputValue()).toBe(realm.token_endpoint);
    await form.getByLabel('Client ID', { exact: true }).fill(CLIENT.clientId);
    await form.getByLabel('Client secret', { exact: true }).fill(CLIENT.clientSecret);
    await form.getByRole('checkbox', { name: /just-in-time provisioning/ }).check();
    await form.getByRole('button', { name: 'Add provider' }).click();

    // Assess: the redirect URI to register, with Copy; the API has the provider
    await page.getByRole('heading', { name: 'Register the redirect URI at Team SSO' }).waitFor();
    const created = (await providers()).find((p) => p.name === 'Team SSO');
    expect(created).toMatchObject({
      issuer: realm.issuer,
      authorization_endpoint: realm.authorization_endpoint,
      jit_provisioning: true,
      enabled: true,
    });
    expect(await page.locator('.copy-value code').textContent()).toBe(
      `${stack.env['PUBLIC_BASE_URL']}/api/v1/auth/sso/${created!.id}/callback`,
    );
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await seriousViolations(page)).toEqual([]);

    // Act: role mappings, by keyboard: deployers -> operator, and one added and removed again
    await page.getByRole('button', { name: 'Role mappings of Team SSO' }).click();
    const mapForm = page.getByRole('form', { name: 'New role mapping of Team SSO' });
    await mapForm.getByLabel('Group', { exact: true }).focus();
    await page.keyboard.type('deployers');
    await page.keyboard.press('Tab');
    await page.keyboard.type('operator'); // a closed select takes what is typed
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByText('Members of deployers now get the role operator.').waitFor();
    // the form is emptied once the list is read again
    await expect.poll(() => mapForm.getByLabel('Group', { exact: true }).inputValue()).toBe('');
    await page.locator('tr[data-mapping-id]', { hasText: 'deployers' }).waitFor();
    await mapForm.getByLabel('Group', { exact: true }).fill('temporary');
    await mapForm.getByLabel('Role', { exact: true }).selectOption('user');
    await mapForm.getByRole('button', { name: 'Add mapping' }).click();
    await page.getByRole('button', { name: 'Remove mapping temporary to user' }).click();
    await page.getByRole('button', { name: 'Confirm remove mapping temporary to user' }).click();
    await page.getByText('The mapping of temporary to user is removed.').waitFor();
    // Assess
    const mappings = (await call('GET', `/admin/identity-providers/${created!.id}/role-mappings`)).json as {
      claim_value: string;
      role: string;
    }[];
    expect(mappings.map((m) => [m.claim_value, m.role])).toEqual([['deployers', 'operator']]);
    expect(await seriousViolations(page)).toEqual([]);

    // Act: edit it: link existing accounts by verified email (the stored secret is kept: the field stays empty)
    await page.getByRole('button', { name: 'Edit Team SSO' }).click();
    const editor = page.getByRole('form', { name: 'Edit Team SSO' });
    await editor.getByRole('checkbox', { name: /Link an existing account/ }).check();
    await editor.getByRole('button', { name: 'Save provider' }).click();
    await editor.waitFor({ state: 'detached' });
    // Assess
    expect(
      (await call('GET', `/admin/identity-providers/${created!.id}`)).json as Record<string, unknown>,
    ).toMatchObject({ link_by_email: true, jit_provisioning: true, issuer: realm.issuer });

    // Act: someone signs in with it in another browser (the public list is kept up to 5 s)
    await expect
      .poll(async () => ((await call('GET', '/auth/sso')).json.data as { name: string }[]).map((p) => p.name), {
        timeout: 15_000,
      })
      .toContain('Team SSO');
    idp.signIn({
      sub: 'gina',
      email: 'gina@corp.example',
      email_verified: true,
      name: 'Gina SSO',
      groups: ['deployers'],
    });
    const other = await browser.newContext(DESKTOP);
    const signIn = await other.newPage();
    await signIn.goto(stack.baseUrl);
    await signIn.getByRole('link', { name: 'Sign in with Team SSO' }).click();
    // Assess: signed in as Gina, an operator through the mapping
    await signIn.getByRole('heading', { name: 'Deployments' }).waitFor({ timeout: 20_000 });
    expect(await signIn.locator('.who').textContent()).toBe('Gina SSO');
    expect(await signIn.getByRole('link', { name: 'New deployment' }).count()).toBe(1);
    await other.close();

    // Act: disable it; deleting it is refused while Gina is linked, and the page says so
    await page.getByRole('button', { name: 'Disable Team SSO' }).click();
    await page.getByText('Team SSO disabled: no longer offered at sign-in.').waitFor();
    await page.getByRole('button', { name: 'Delete Team SSO' }).click();
    await page.getByRole('button', { name: 'Confirm delete Team SSO' }).click();
    // Assess
    await expect
      .poll(() => page.getByRole('alert').first().textContent())
      .toMatch(/Users are linked to this identity provider/);
    expect((await providers()).find((p) => p.id === created!.id)).toMatchObject({ enabled: false, linked_users: 1 });
    await page.context().close();
  }, 120_000);

  it('shows why a provider that cannot be reached is refused, and stores nothing; usable on a phone', async () => {
    const page = await signInPage(browser, stack.baseUrl, ADMIN, PHONE);
    await openSection(page, 'Identity providers');
    const before = await providers();
    // Act: endpoints typed by hand (so the create itself reads the discovery document)
    const form = page.getByRole('form', { name: 'New identity provider' });
    await form.getByLabel('Name', { exact: true }).fill('Dead SSO');
    await form.getByLabel('Issuer URL', { exact: true }).fill(`http://${closedHost}`);
    await form.getByLabel('Client ID', { exact: true }).fill('someone');
    await form.getByLabel('Client secret', { exact: true }).fill('something');
    await form.getByLabel('Authorization endpoint', { exact: true }).fill(`http://${closedHost}/authorize`);
    await form.getByLabel('Token endpoint', { exact: true }).fill(`http://${closedHost}/token`);
    await form.getByLabel('JWKS URI', { exact: true }).fill(`http://${closedHost}/jwks`);
    await form.getByRole('button', { name: 'Add provider' }).click();
    // Assess: the reason, where the user looks; nothing stored
    await expect
      .poll(() => page.getByRole('alert').first().textContent())
      .toMatch(
        new RegExp(`Could not read http://${closedHost}/\\.well-known/openid-configuration: .*refused the connection`),
      );
    expect(await providers()).toEqual(before);
    expect(await seriousViolations(page)).toEqual([]);
    expect(await pageWidth(page)).toBeLessThanOrEqual(390);
    await page.context().close();
  }, 60_000);

  it('creates an OAuth client by keyboard on a phone: its secret shown once with Copy, a new secret, then delete', async () => {
    const page = await signInPage(browser, stack.baseUrl, ADMIN, PHONE);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.baseUrl });
    await openSection(page, 'OAuth clients');
    expect(await seriousViolations(page)).toEqual([]);

    // Act: by keyboard: name, the client-credentials grant, one scope, submit
    const form = page.getByRole('form', { name: 'New OAuth client' });
    await form.getByLabel('Name', { exact: true }).focus();
    await page.keyboard.type('Release bot');
    await form.getByRole('checkbox', { name: /Client credentials/ }).focus();
    await page.keyboard.press('Space');
    await form.getByRole('checkbox', { name: 'deployments:read', exact: true }).focus();
    await page.keyboard.press('Space');
    await form.getByRole('button', { name: 'Create client' }).focus();
    await page.keyboard.press('Enter');

    // Assess: the secret, shown once where the user looks, with Copy; it works at the token endpoint
    const once = page.getByTestId('secret-once');
    await once.waitFor();
    const secret = (await once.textContent())!.trim();
    const clients = (await call('GET', '/admin/oauth-clients')).json as {
      id: string;
      client_id: string;
      name: string;
      grant_types: string[];
      scopes: string[];
      is_active: boolean;
    }[];
    const client = clients.find((c) => c.name === 'Release bot')!;
    expect([client.scopes, client.grant_types.includes('client_credentials')]).toEqual([['deployments:read'], true]);
    expect(await page.evaluate<boolean>("document.activeElement?.closest('.secret-once') !== null")).toBe(true);
    await page.getByRole('button', { name: 'Copy client secret' }).click();
    await page.getByText(/^(Copied\.|Selected: press)/).waitFor();
    const token = (s: string) =>
      fetch(`${stack.baseUrl}/oauth/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${client.client_id}:${s}`).toString('base64')}`,
        },
        body: 'grant_type=client_credentials&scope=deployments%3Aread',
      }).then((r) => r.status);
    expect(await token(secret)).toBe(200);
    expect(await seriousViolations(page)).toEqual([]);
    expect(await pageWidth(page)).toBeLessThanOrEqual(390);
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.content()).not.toContain(secret); // never in the list afterwards

    // Act: a new secret, confirmed in the page
    await page.getByRole('button', { name: /^New secret for Release bot/ }).click();
    await page.getByRole('button', { name: /^Confirm new secret for Release bot/ }).click();
    await once.waitFor();
    const rotated = (await once.textContent())!.trim();
    // Assess: the old one stops working, the new one works
    expect(rotated).not.toBe(secret);
    expect([await token(secret), await token(rotated)]).toEqual([401, 200]);
    await page.getByRole('button', { name: 'Done' }).click();

    // Act: edit it by keyboard: a new name, a redirect URI and the authorization-code grant, one more scope
    await page.getByRole('button', { name: 'Edit Release bot', exact: true }).focus();
    await page.keyboard.press('Enter');
    const edit = page.getByRole('form', { name: 'Edit OAuth client Release bot', exact: true });
    await edit.waitFor();
    expect(await page.evaluate<string | undefined>("document.activeElement?.getAttribute('name')")).toBe('name');
    expect(await edit.getByRole('checkbox', { name: 'deployments:read', exact: true }).isChecked()).toBe(true);
    await edit.getByLabel('Name', { exact: true }).fill('Release bot 2');
    await edit.getByLabel('Redirect URIs (one per line)').fill('https://bot.example.com/callback');
    await edit.getByRole('checkbox', { name: /Authorization code/ }).focus();
    await page.keyboard.press('Space');
    await edit.getByRole('checkbox', { name: 'targets:read', exact: true }).focus();
    await page.keyboard.press('Space');
    expect(await seriousViolations(page)).toEqual([]);
    expect(await pageWidth(page)).toBeLessThanOrEqual(390);
    await edit.getByRole('button', { name: 'Save changes' }).click();
    // Assess: saved, read back over the API; the secret still works
    await page.getByText('OAuth client Release bot saved.').waitFor();
    await edit.waitFor({ state: 'detached' });
    const edited = (await call('GET', `/admin/oauth-clients/${client.id}`)).json;
    expect(edited).toMatchObject({
      name: 'Release bot 2',
      redirect_uris: ['https://bot.example.com/callback'],
      is_active: true,
    });
    expect([...edited.grant_types].sort()).toEqual(['authorization_code', 'client_credentials']);
    expect([...edited.scopes].sort()).toEqual(['deployments:read', 'targets:read']);
    expect(await token(rotated)).toBe(200);
    // Act: a refused change (the authorization-code grant without a redirect URI) shows the API's reason
    await page.getByRole('button', { name: 'Edit Release bot 2' }).click();
    const edit2 = page.getByRole('form', { name: 'Edit OAuth client Release bot 2' });
    await edit2.waitFor();
    await edit2.getByLabel('Redirect URIs (one per line)').fill('');
    await edit2.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent()).toMatch(/redirect/i);
    expect((await call('GET', `/admin/oauth-clients/${client.id}`)).json.redirect_uris).toEqual([
      'https://bot.example.com/callback',
    ]);
    await edit2.getByRole('button', { name: 'Cancel' }).click();

    // Act: delete (deactivate), confirmed in the page
    await page.getByRole('button', { name: 'Delete Release bot 2' }).click();
    await page.getByRole('button', { name: 'Confirm delete Release bot 2' }).click();
    // Assess
    await page.locator(`tr[data-client-id="${client.id}"]`, { hasText: 'inactive' }).waitFor();
    expect((await call('GET', `/admin/oauth-clients/${client.id}`)).json.is_active).toBe(false);
    await page.context().close();
  }, 90_000);
});
