// The analysis provider adapter goes through the SSRF guard: a host not in its allow-list is refused before any
// request (http, a loopback or metadata address); an allowed loopback server that answers 500 or redirects is "not
// 2xx" (the redirect is not followed, so the key never goes along); silence is "unreachable"; no message carries the
// provider's status, body or a transport error.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAiCompatibleProvider, providerUrlPolicy } from '../../../../infra/analysis/openai-provider.js';

let server: Server;
let base = '';
let allowed: readonly string[] = [];
const seen: string[] = [];
let answer: (res: ServerResponse) => void = (res) => res.end();

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}/v1`;
  allowed = [`127.0.0.1:${port}`];
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((done) => server.close(() => done()));
});

const ask = (url: string, timeoutMs = 2000) =>
  openAiCompatibleProvider(allowed).complete({
    url,
    model: 'm',
    apiKey: 'sk-secret',
    system: 's',
    prompt: 'p',
    maxTokens: 50,
    timeoutMs,
  });

/** The message of the failure the promise ends with (a success fails the test). */
const failureOf = (answer: Promise<string>): Promise<string> =>
  answer.then(
    (content) => {
      throw new Error(`expected a failure, got ${content}`);
    },
    (error: Error) => error.message,
  );

describe('openAiCompatibleProvider', () => {
  it('answers the content of an allowed provider', async () => {
    answer = (res) => res.end(JSON.stringify({ choices: [{ message: { content: 'hello' } }] }));
    expect(await ask(base)).toBe('hello');
    expect(seen.at(-1)).toBe('POST /v1/chat/completions Bearer sk-secret');
  });

  it('says "not 2xx" for a 500 and for a redirect, which it does not follow; never the status or body', async () => {
    // Arrange
    answer = (res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('internal secret stack trace');
    const before = seen.length;
    // Act
    const failed = await failureOf(ask(base));
    answer = (res) => res.writeHead(302, { location: `${base}/elsewhere` }).end();
    const redirected = await failureOf(ask(base));
    // Assess
    expect(failed).toBe('not 2xx');
    expect(redirected).toBe('not 2xx');
    expect(seen.slice(before)).toEqual([
      'POST /v1/chat/completions Bearer sk-secret',
      'POST /v1/chat/completions Bearer sk-secret',
    ]);
  });

  it('says "unreachable" when nothing answers in time or nothing listens', async () => {
    answer = () => undefined; // never answers
    expect(await failureOf(ask(base, 300))).toBe('unreachable: no answer within 300 ms');
    const closed = openAiCompatibleProvider(['127.0.0.1:1']).complete({
      url: 'http://127.0.0.1:1/v1',
      model: 'm',
      apiKey: null,
      system: 's',
      prompt: 'p',
      maxTokens: 50,
      timeoutMs: 2000,
    });
    expect(await failureOf(closed)).toBe('unreachable');
  });

  it.each([
    ['http://models.example.com/v1', 'refused: the URL must be an https URL'],
    [
      'https://127.0.0.2/v1',
      'refused: the URL must not point to a private, loopback, link-local or otherwise internal address',
    ],
    [
      'https://169.254.169.254/latest',
      'refused: the URL must not point to a private, loopback, link-local or otherwise internal address',
    ],
    [
      'https://[::ffff:0:7f00:1]/v1',
      'refused: the URL must not point to a private, loopback, link-local or otherwise internal address',
    ],
    ['https://localhost:1/v1', 'refused: private address'],
  ])('refuses %s before any request: %s', async (url, message) => {
    const before = seen.length;
    expect(await failureOf(ask(url))).toBe(message);
    expect(seen.length).toBe(before);
  });
});

describe('providerUrlPolicy', () => {
  it.each([
    ['https://models.example.com/v1', undefined],
    ['http://models.example.com/v1', 'must be an https URL'],
    ['https://169.254.169.254/', 'must not point to a private, loopback, link-local or otherwise internal address'],
    ['https://localhost/v1', 'resolves to a private, loopback, link-local or otherwise internal address'],
  ])('%s -> %s', async (url, problem) => {
    expect(await providerUrlPolicy(['127.0.0.1:9']).problem(url)).toBe(problem);
  });

  it('lets an allowed host through over http', async () => {
    expect(await providerUrlPolicy(allowed).problem(base)).toBeUndefined();
  });
});
