// The console's fleet pages in a real browser (Debian's chromium, playwright-core) against the local stack: a host
// enrolled by the bundled agent with a token made in the console (keyboard only), renamed and tagged from the
// console; a deploy trigger whose signed call, copied from the page, starts a deployment; a webhook to a local
// receiver with its test event in the delivery log, redelivered; tokens revoked and targets deleted after an in-page
// confirm; a read-only user offered no change; desktop and a 390 px phone; axe clean. Each change is read back
// through the API.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnAgent, writeAgentBundle, type LocalAgent } from '../../local/agents.js';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { launchChromium, seriousViolations, signInPage } from '../support/console.js';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const PHONE = { viewport: { width: 390, height: 844 } };
let helloId: string;
/** Where screenshots go: SCREENSHOT_DIR=docs keeps them beside the others (console-fleet-*.png). */
const SHOTS = process.env['SCREENSHOT_DIR'] ?? mkdtempSync(join(tmpdir(), 'console-fleet-shots-'));

let stack: Stack;
let browser: Browser;
let admin: string;
let dir: string;
let agent: LocalAgent | undefined;
let targetId: string;
const agentLog: string[] = [];

interface Received {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}
const received: Received[] = [];
let receiver: Server;
let receiverUrl: string;

const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, body?: unknown, token = admin) =>
  api.call(method, `/api/v1${path}`, { token, body });

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });

/** Nothing wider than the viewport: the page scrolls down only (tables scroll inside their wrappers). */
const widthOverflow = (page: Page) =>
  page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');

const openIntegrations = async (page: Page, which: 'Deploy triggers' | 'Webhooks') => {
  await page.getByRole('link', { name: 'Integrations' }).click();
  await page.getByRole('navigation', { name: 'Integrations' }).getByRole('link', { name: which }).click();
  await page.getByRole('heading', { name: which, level: 1 }).waitFor();
};

beforeAll(async () => {
  browser = await launchChromium(); // first: without a browser the file fails before starting anything
  receiver = createServer((request, response) => {
    void readBody(request).then((body) => {
      const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
      received.push({ path: request.url ?? '/', headers, body });
      response.writeHead(204);
      response.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('consfleet')}-`,
    bootstrapAdmin: ADMIN,
    tableStreams: true,
  });
  admin = (await api.login(ADMIN)).token;
  dir = await mkdtemp(join(tmpdir(), 'deployer-console-fleet-'));
  const action = await call('POST', '/actions', {
    slug: 'hello',
    name: 'hello',
    version: { version: '1.0.0', script: 'echo "hello from $(hostname)"' },
  });
  expect(action.status).toBe(201);
  helloId = action.json.id;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await agent?.stop({ graceSeconds: 1 });
  await stack?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('the console: targets, enrollment, triggers and webhooks', () => {
  it('enrolls a host with a token made in the console (keyboard only), then renames and tags it', async () => {
    const page = await signInPage(browser, stack.baseUrl, ADMIN);
    await page.getByRole('link', { name: 'Targets' }).click();
    await page.getByRole('heading', { name: 'Enrollment tokens' }).waitFor();

    // Act: the form by keyboard only
    const form = page.getByRole('form', { name: 'Add a host' });
    await form.getByLabel('Description').focus();
    await page.keyboard.type('rack 4 web hosts');
    await page.keyboard.press('Tab');
    await page.keyboard.type('role=web, rack=4');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('2');
    await page.keyboard.press('Tab'); // expires in: the default, 24 hours
    await page.keyboard.press('Tab');
    await page.keyboard.type('fleet-1');
    await page.keyboard.press('Enter');

    // Assess: the token once, where the user looks (focus on its heading), with the install line
    const token = (await page.getByTestId('enrollment-token').textContent())!;
    expect(token).toMatch(/^det_\S+$/);
    expect(await page.evaluate<string | undefined>('document.activeElement?.textContent')).toBe('Enrollment token');
    expect(await page.getByTestId('agent-command').textContent()).toBe(
      `curl -fsSL ${stack.baseUrl}/agent/install.sh | sudo sh -s -- --server ${stack.baseUrl} --enroll ${token} --name fleet-1`,
    );
    expect(await page.getByRole('button', { name: 'Copy the install command' }).count()).toBe(1);
    const row = page.locator('tr[data-token-id]', { hasText: 'rack 4 web hosts' });
    expect(await row.getByTestId('uses-left').textContent()).toBe('2 of 2');
    expect(await row.textContent()).toContain('Administrator');
    expect(await page.locator('table.tokens').textContent()).not.toContain(token);
    expect(await seriousViolations(page)).toEqual([]);
    const listed = (await call('GET', '/targets/enrollment-tokens?limit=100')).json.data as Record<string, unknown>[];
    expect(listed.find((t) => t['description'] === 'rack 4 web hosts')).toMatchObject({
      max_uses: 2,
      uses: 0,
      tags: [
        { key: 'role', value: 'web' },
        { key: 'rack', value: '4' },
      ],
      created_by_name: 'Administrator',
    });

    // Act: the bundled agent enrolls with the token from the page
    const bundle = await writeAgentBundle(stack, dir);
    agent = await spawnAgent({
      bundle,
      args: ['--server', stack.baseUrl, '--state-dir', join(dir, 'fleet-1'), '--name', 'fleet-1'],
      cwd: dir,
      enrollToken: token,
      log: (line) => agentLog.push(line),
    });
    targetId = agent.targetId;

    // Assess: live in the list, online, with the token's tags; one use taken
    const targetRow = page.locator(`tr[data-target-id="${targetId}"]`);
    await expect.poll(() => targetRow.locator('.state').textContent(), { timeout: 20_000 }).toBe('online');
    expect(await targetRow.getByTestId('target-tags').textContent()).toBe('role=web, rack=4');
    await page.reload();
    await expect.poll(() => row.getByTestId('uses-left').textContent()).toBe('1 of 2');

    // Act: rename and tag it, by keyboard
    await targetRow.waitFor();
    await page.getByRole('button', { name: 'Edit fleet-1' }).focus();
    await page.keyboard.press('Enter');
    const editor = page.getByRole('form', { name: 'Edit fleet-1' });
    await editor.getByLabel('Name').focus();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('fleet-web-1');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('role=web, tier=front');
    await page.keyboard.press('Enter');

    // Assess: the page says so, the list follows live, and the API has it
    await page.locator('p.notice', { hasText: 'Target fleet-web-1 saved.' }).waitFor();
    await expect.poll(() => targetRow.getByTestId('target-tags').textContent()).toBe('role=web, tier=front');
    expect(await targetRow.getByTestId('target-name').textContent()).toContain('fleet-web-1');
    const target = await call('GET', `/targets/${targetId}`);
    expect([target.json.name, target.json.tags]).toEqual([
      'fleet-web-1',
      [
        { key: 'role', value: 'web' },
        { key: 'tier', value: 'front' },
      ],
    ]);

    // Assess: its details, with the agent's version and no tenant
    await page.getByRole('button', { name: 'Details of fleet-web-1' }).click();
    const details = page.getByRole('definition').filter({ hasText: target.json.agent_version as string });
    expect(await details.count()).toBeGreaterThan(0);
    expect(await page.locator('dl.facts').textContent()).toContain('none (global)');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'console-fleet-targets.png'), fullPage: true });
    await page.context().close();
  }, 120_000);

  it('on a phone, the install line the page shows enrolls a real agent that comes online in the list', async () => {
    // Prepare: the tools install.sh uses, and no systemctl (a host without systemd: it installs, enrolls and prints
    // the foreground command; a CI runner with systemd must not get a real service from a test)
    const { existsSync } = await import('node:fs');
    const { mkdir, symlink } = await import('node:fs/promises');
    const { spawn } = await import('node:child_process');
    const bin = join(dir, 'phone-bin');
    await mkdir(bin, { recursive: true });
    const tools = ['sh', 'curl', 'sha256sum', 'cut', 'mktemp', 'rm', 'mkdir', 'rmdir', 'cp', 'mv', 'chmod', 'chown'];
    for (const tool of [...tools, 'cat', 'grep', 'sort', 'dirname', 'basename', 'id']) {
      const found = ['/usr/local/bin', '/usr/bin', '/bin'].map((d) => join(d, tool)).find((f) => existsSync(f));
      if (found === undefined) throw new Error(`${tool} is not installed`);
      await symlink(found, join(bin, tool));
    }
    const page = await signInPage(browser, stack.baseUrl, ADMIN, PHONE);
    await page.getByRole('link', { name: 'Targets' }).click();
    // Act: a token for one host, from the page
    const form = page.getByRole('form', { name: 'Add a host' });
    await form.getByLabel('Description').fill('phone host');
    await form.getByLabel(/^Tags/).fill('role=phone');
    await form.getByLabel(/^Host name for the command/).fill('phone-1');
    await form.getByRole('button', { name: /Create/ }).click();
    const line = (await page.getByTestId('agent-command').textContent())!;
    expect(line).toMatch(/^curl -fsSL \S+\/agent\/install\.sh \| sudo sh -s -- .*--enroll det_\S+ --name phone-1$/);
    expect(await widthOverflow(page)).toBe(0);
    // ... run as shown, but without sudo, under a folder, with this Node (what a host needs and has)
    const host = join(dir, 'phone-host');
    const run = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(
        '/bin/sh',
        ['-c', `${line.replace('| sudo sh', '| sh')} --prefix ${host} --node ${process.execPath}`],
        { cwd: dir, env: { PATH: bin, HOME: dir } },
      );
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      child.on('close', (code) => resolve({ code, out }));
    });
    expect([run.code, run.out]).toEqual([3, expect.stringContaining('run it in the foreground')]);
    const foreground = run.out.trim().split('\n').at(-1)!.trim();
    const agentProcess = spawn('/bin/sh', ['-c', `exec ${foreground}`], {
      cwd: dir,
      env: { ...process.env, HOME: dir },
    });
    try {
      // Assess: the new host is listed, online, with the token's tag
      const row = page.locator('tr[data-target-id]', { hasText: 'phone-1' });
      await expect.poll(() => row.locator('.state').textContent(), { timeout: 30_000 }).toBe('online');
      expect(await row.getByTestId('target-tags').textContent()).toBe('role=phone');
      expect(await seriousViolations(page)).toEqual([]);
      expect(await widthOverflow(page)).toBe(0);
    } finally {
      agentProcess.kill('SIGTERM');
      await new Promise((resolve) =>
        agentProcess.exitCode !== null ? resolve(null) : agentProcess.once('exit', resolve),
      );
    }
    await page.context().close();
  }, 120_000);

  it('creates a trigger whose signed call, copied from the page, starts a deployment; disabled it refuses', async () => {
    const page = await signInPage(browser, stack.baseUrl, ADMIN);
    await openIntegrations(page, 'Deploy triggers');
    // Act
    const form = page.getByRole('form', { name: 'New trigger' });
    await form.getByLabel('Name', { exact: true }).fill('release from CI');
    await form.getByLabel('Which action').selectOption({ label: 'hello' });
    await form.getByLabel('Targets with tags').fill('tier=front');
    await form.getByLabel('Deploy only when').fill('ref = refs/heads/main');
    await form.getByRole('button', { name: 'Create trigger' }).click();

    // Assess: the secret once, with a signed call that works as written
    const secret = (await page.getByTestId('trigger-secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    const curl = (await page.getByTestId('trigger-curl').textContent())!;
    expect(curl).toContain(`SECRET='${secret}'`);
    expect(curl).toContain(`BODY='{"ref":"refs/heads/main"}'`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'console-fleet-trigger.png'), fullPage: true });
    const run = async () =>
      JSON.parse((await promisify(execFile)('bash', ['-c', curl])).stdout) as {
        deployment_id?: string;
        error?: { code: string };
      };
    const started = await run();
    expect(started.error).toBeUndefined();
    const deployment = await call('GET', `/deployments/${started.deployment_id!}`);
    expect([deployment.status, deployment.json.triggered_by_name, deployment.json.action_name]).toEqual([
      200,
      'Administrator',
      'hello',
    ]);
    const trigger = ((await call('GET', '/triggers')).json as { id: string; name: string }[]).find(
      (t) => t.name === 'release from CI',
    )!;
    expect(await page.locator('table.triggers').textContent()).not.toContain(secret);

    // Act: its last call shows; disable it
    await page.getByRole('button', { name: 'Done' }).click();
    await page.reload();
    const row = page.locator(`tr[data-trigger-id="${trigger.id}"]`);
    await expect.poll(() => row.getByTestId('last-called').textContent()).not.toBe('—');
    await page.getByRole('button', { name: 'Disable release from CI' }).click();
    await expect.poll(() => row.getByTestId('trigger-state').textContent()).toBe('disabled');
    // Assess: the API agrees, and a call is refused
    expect((await call('GET', `/triggers/${trigger.id}`)).json.enabled).toBe(false);
    const refused = await run();
    expect(refused.error).toMatchObject({ code: 'FORBIDDEN' });

    // Act: delete, confirmed in the page
    await page.getByRole('button', { name: 'Delete release from CI' }).click();
    await page.getByRole('button', { name: 'Confirm delete release from CI' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await call('GET', `/triggers/${trigger.id}`)).status).toBe(404);
    await page.context().close();
  }, 90_000);

  it("edits a trigger's saved request on a phone: a masked secret left as *** is kept, a retyped one replaced", async () => {
    // Prepare: a trigger saving a secret value, made over the API
    const made = await call('POST', '/triggers', {
      name: 'nightly',
      request: {
        action_id: helloId,
        target_tags: [{ key: 'tier', value: 'front' }],
        variables: { TOKEN: 'hunter2-very-secret', MODE: 'fast' },
      },
    });
    expect(made.status).toBe(201);
    const id = made.json.id as string;
    const saved = async () => {
      const { infra } = await import('../../functions/shared/wiring.js');
      const { triggersDeps } = await import('../../functions/shared/triggers-wiring.js');
      const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
      const raw = await infra().db.send(
        new GetCommand({ TableName: infra().config.TABLE_NAME, Key: { pk: `TRIGGER#${id}`, sk: 'TRIGGER' } }),
      );
      const sealed = (raw.Item?.['request'] as { sealed_values: string }).sealed_values;
      return JSON.parse(triggersDeps().cipher.decrypt(sealed, `trigger:${id}`)) as {
        variables: Record<string, string>;
      };
    };
    const page = await signInPage(browser, stack.baseUrl, ADMIN, PHONE);
    await openIntegrations(page, 'Deploy triggers');
    // Act: change the version, the tags and MODE; TOKEN stays as shown (masked)
    await page.getByRole('button', { name: 'Edit nightly' }).click();
    const editor = page.getByRole('form', { name: 'Edit nightly' });
    const variables = editor.getByLabel(/^Fixed variables/);
    expect(await variables.inputValue()).toBe('TOKEN = ***\nMODE = ***');
    await editor.getByLabel('Version (a range; empty: the latest)').fill('^1');
    await editor.getByLabel('Targets with tags').fill('tier=back');
    await variables.fill('TOKEN = ***\nMODE = slow');
    expect(await seriousViolations(page)).toEqual([]);
    expect(await widthOverflow(page)).toBe(0);
    await editor.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Trigger nightly saved.').waitFor();
    // Assess: read back over the API (still masked), and the stored values: TOKEN kept, MODE replaced
    const read = (await call('GET', `/triggers/${id}`)).json;
    expect([read.request.version_requirement, read.request.target_tags, read.request.variables]).toEqual([
      '^1',
      [{ key: 'tier', value: 'back' }],
      { TOKEN: '***', MODE: '***' },
    ]);
    expect((await saved()).variables).toEqual({ TOKEN: 'hunter2-very-secret', MODE: 'slow' });
    // Act: a new value typed for TOKEN, MODE's line removed
    await page.getByRole('button', { name: 'Edit nightly' }).click();
    await editor.getByLabel(/^Fixed variables/).fill('TOKEN = rotated-value');
    await editor.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Trigger nightly saved.').waitFor();
    expect((await saved()).variables).toEqual({ TOKEN: 'rotated-value' });
    await page.context().close();
  }, 90_000);

  it('wires a webhook to a local receiver on a phone: secret once, a test event in the log, redelivered, deleted', async () => {
    const page = await signInPage(browser, stack.baseUrl, ADMIN, PHONE);
    await openIntegrations(page, 'Webhooks');
    // Act: a URL inside the network is refused by the API, and the page says why
    const form = page.getByRole('form', { name: 'New webhook' });
    await form.getByLabel('URL').fill('https://10.1.2.3/hook');
    await form.getByRole('button', { name: 'Create webhook' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/url/i);
    expect((await call('GET', '/webhooks')).json.data).toEqual([]);
    // Act
    await form.getByLabel('URL').fill(`${receiverUrl}/hook`);
    await form.getByLabel('Description').fill('CI notifications');
    await form.getByRole('button', { name: 'Create webhook' }).click();
    // Assess
    const secret = (await page.getByTestId('webhook-secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    const hooks = (await call('GET', '/webhooks')).json.data as { id: string; event_types: string[] }[];
    expect(hooks.map((h) => h.event_types)).toEqual([['deployment.succeeded', 'deployment.failed']]);
    const hookId = hooks[0]!.id;
    expect(await widthOverflow(page)).toBeLessThanOrEqual(0);
    expect(await seriousViolations(page)).toEqual([]);

    // Act: a test event
    await page.getByRole('button', { name: `Send test to ${receiverUrl}/hook` }).click();
    const delivery = page.locator('tr[data-delivery-id]').first();
    // Assess: delivered, answered 204, signed with the secret the page showed
    await expect
      .poll(
        () =>
          delivery
            .getByTestId('delivery-state')
            .textContent()
            .catch(() => ''),
        { timeout: 20_000 },
      )
      .toBe('delivered');
    expect(await delivery.getByTestId('delivery-code').textContent()).toBe('204');
    expect(await delivery.textContent()).toContain('ping');
    expect(received).toHaveLength(1);
    const ping = new Webhook(secret).verify(received[0]!.body, received[0]!.headers) as { type: string };
    expect(ping.type).toBe('ping');
    expect(await widthOverflow(page)).toBeLessThanOrEqual(0);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'console-fleet-webhooks-phone.png'), fullPage: true });

    // Act: redeliver it
    await delivery.getByRole('button', { name: /^Redeliver ping/ }).click();
    // Assess: the receiver has it again, with the same webhook-id
    await expect.poll(() => received.length, { timeout: 20_000 }).toBe(2);
    expect(received[1]!.headers['webhook-id']).toBe(received[0]!.headers['webhook-id']);
    await expect
      .poll(
        async () => ((await call('GET', `/webhooks/${hookId}/deliveries`)).json.data as { state: string }[])[0]?.state,
      )
      .toBe('delivered');

    // Act: disable, then delete after the confirm
    await page.getByRole('button', { name: `Disable ${receiverUrl}/hook` }).click();
    await expect.poll(() => page.getByTestId('webhook-state').textContent()).toBe('disabled');
    expect((await call('GET', `/webhooks/${hookId}`)).json.enabled).toBe(false);
    await page.getByRole('button', { name: `Delete ${receiverUrl}/hook` }).click();
    await page.getByRole('button', { name: `Confirm delete ${receiverUrl}/hook` }).click();
    await page.locator(`tr[data-webhook-id="${hookId}"]`).waitFor({ state: 'detached' });
    expect((await call('GET', `/webhooks/${hookId}`)).status).toBe(404);
    await page.context().close();
  }, 90_000);

  it('offers a read-only user no change on any of the pages, on a phone, axe clean', async () => {
    // Prepare: a role that reads targets, deployments and the tenant's webhooks, and a webhook to look at
    const role = await call('POST', '/admin/roles', { name: 'fleet-readers' });
    expect(role.status).toBe(201);
    const granted = await call('POST', `/admin/roles/${role.json.id}/permissions`, {
      permissions: ['targets:read', 'deployments:read', 'tenants:read'],
    });
    expect(granted.status).toBe(204);
    await createUser('reader@example.com', 'reader-password', ['fleet-readers']);
    const hook = await call('POST', '/webhooks', { url: `${receiverUrl}/read`, event_types: ['target.online'] });
    expect(hook.status).toBe(201);
    const page = await signInPage(
      browser,
      stack.baseUrl,
      { email: 'reader@example.com', password: 'reader-password' },
      PHONE,
    );

    // Assess: targets and tokens, read only
    await page.getByRole('link', { name: 'Targets' }).click();
    await page.locator(`tr[data-target-id="${targetId}"]`).waitFor();
    await page.locator('tr[data-token-id]').first().waitFor();
    expect(await page.getByRole('button', { name: /^(Edit|Delete|Revoke) / }).count()).toBe(0);
    expect(await page.getByRole('form', { name: 'Add a host' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Details of fleet-web-1' }).count()).toBe(1);
    expect(await widthOverflow(page)).toBeLessThanOrEqual(0);
    expect(await seriousViolations(page)).toEqual([]);

    // Assess: triggers, no form
    await openIntegrations(page, 'Deploy triggers');
    expect(await page.getByRole('form', { name: 'New trigger' }).count()).toBe(0);
    expect(await widthOverflow(page)).toBeLessThanOrEqual(0);
    expect(await seriousViolations(page)).toEqual([]);

    // Assess: webhooks, the log but no change
    await openIntegrations(page, 'Webhooks');
    await page.locator(`tr[data-webhook-id="${hook.json.id as string}"]`).waitFor();
    expect(await page.getByRole('form', { name: 'New webhook' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^(Edit|Delete|Disable|Send test|New secret) / }).count()).toBe(0);
    await page
      .locator(`tr[data-webhook-id="${hook.json.id as string}"]`)
      .getByRole('button', { name: /^Deliveries of / })
      .click();
    await page.getByRole('heading', { name: 'Delivery log (7 days)' }).waitFor();
    expect(await widthOverflow(page)).toBeLessThanOrEqual(0);
    expect(await seriousViolations(page)).toEqual([]);

    // Assess: the API refuses what the page does not offer (the page is not the guard)
    const reader = (await api.login({ email: 'reader@example.com', password: 'reader-password' })).token;
    const refused = await call('PUT', `/targets/${targetId}`, { name: 'taken' }, reader);
    expect([refused.status, refused.json.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    expect((await call('GET', `/targets/${targetId}`)).json.name).toBe('fleet-web-1');
    await page.context().close();
  }, 90_000);

  it('revokes a token and deletes a target only after the confirm in the page', async () => {
    const page = await signInPage(browser, stack.baseUrl, ADMIN);
    await page.getByRole('link', { name: 'Targets' }).click();
    const tokenRow = page.locator('tr[data-token-id]', { hasText: 'rack 4 web hosts' });
    await tokenRow.waitFor();
    const tokenId = (await tokenRow.getAttribute('data-token-id'))!;
    // Act: Revoke asks first; Cancel keeps it
    await page.getByRole('button', { name: 'Revoke rack 4 web hosts' }).click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect(
      ((await call('GET', '/targets/enrollment-tokens')).json.data as { id: string }[]).map((t) => t.id),
    ).toContain(tokenId);
    await page.getByRole('button', { name: 'Revoke rack 4 web hosts' }).click();
    await page.getByRole('button', { name: 'Confirm revoke rack 4 web hosts' }).click();
    // Assess
    await tokenRow.waitFor({ state: 'detached' });
    expect(
      ((await call('GET', '/targets/enrollment-tokens')).json.data as { id: string }[]).map((t) => t.id),
    ).not.toContain(tokenId);

    // Act: delete the target
    const targetRow = page.locator(`tr[data-target-id="${targetId}"]`);
    await page.getByRole('button', { name: 'Delete fleet-web-1' }).click();
    await page.getByRole('button', { name: 'Confirm delete fleet-web-1' }).click();
    // Assess: gone from the live list and from the API
    await targetRow.waitFor({ state: 'detached' });
    expect((await call('GET', `/targets/${targetId}`)).status).toBe(404);
    await page.context().close();
  }, 60_000);
});
