// The webhook sender against a real receiver on loopback: refused unless loopback is allowed (at create by the URL
// and the resolved address, at delivery by the guarded lookup), redirects not followed, the answer capped.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookAllowedHosts, webhookSender } from '../../../../infra/webhooks/webhook-sender.js';

let server: Server;
let port: number;
const calls: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    calls.push(request.url ?? '');
    if (request.url === '/redirect') {
      response.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data' });
      response.end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end(request.url === '/big' ? 'x'.repeat(200_000) : 'ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('the webhook sender', () => {
  it('refuses loopback, private, link-local and metadata URLs when loopback is not allowed', async () => {
    // Prepare
    const strict = webhookSender(webhookAllowedHosts([], false));

    // Act + Assess
    expect(strict.urlProblem(`http://127.0.0.1:${port}/x`)).toBe('must be an https URL');
    expect(strict.urlProblem('https://127.0.0.1/x')).toMatch(/internal address/);
    expect(strict.urlProblem('https://169.254.169.254/latest')).toMatch(/internal address/);
    expect(strict.urlProblem('https://10.1.2.3/x')).toMatch(/internal address/);
    expect(strict.urlProblem('https://user:pw@hooks.example.com/x')).toMatch(/credentials/);
    expect(await strict.resolveProblem('https://localhost/x')).toMatch(/internal address/);
  });

  it('refuses at delivery a host that resolves inside, although the URL looked public', async () => {
    const strict = webhookSender(['localhost:1']); // exempts another port only
    const sent = await strict.post(`https://localhost:${port}/x`, {}, '{}');
    expect(sent).toMatchObject({ statusCode: null, error: expect.stringMatching(/internal address/) });
    expect(calls).not.toContain('/x');
  });

  it('reaches loopback where allowed, does not follow redirects, and cuts a long answer', async () => {
    const local = webhookSender(webhookAllowedHosts([], true));
    expect(await local.post(`http://127.0.0.1:${port}/ok`, {}, '{}')).toMatchObject({ statusCode: 200, body: 'ok' });
    const redirected = await local.post(`http://127.0.0.1:${port}/redirect`, {}, '{}');
    expect(redirected.statusCode).toBe(307);
    const big = await local.post(`http://localhost:${port}/big`, {}, '{}');
    expect(big.statusCode).toBe(200);
    expect(big.body.length).toBe(64 * 1024);
  });

  it('gives up after its timeout', async () => {
    const hanging = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const slow = webhookSender(webhookAllowedHosts([], true), { timeoutMs: 300 });
    const sent = await slow.post(`http://127.0.0.1:${(hanging.address() as AddressInfo).port}/`, {}, '{}');
    hanging.closeAllConnections();
    hanging.close();
    expect(sent).toMatchObject({ statusCode: null, error: 'The receiver did not answer in time.' });
  });
});
