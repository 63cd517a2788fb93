// The single local origin (http://localhost:3000 by default): stream paths go to the stream runner, everything
// else to serverless-offline, through an admission gate (local/admission.ts) that answers 503 past its capacity;
// responses are piped through as they arrive, so event streams are not buffered.
// In the cloud, CloudFront plays this part with the same path patterns (serverless.yml), and API Gateway's
// `httpApi.cors` answers CORS preflights: here the front does, with the functions' own CORS settings.
import {
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { CORS_EXPOSE_HEADERS, corsSettings } from '../functions/shared/cors.js';
import { bindPreflight } from '../functions/shared/shell.js';
import { createAddressLimit, type AddressLimit } from './address-limit.js';
import { createAdmission, laneOf, type Admission, type AdmissionLimits } from './admission.js';
import type { ConsoleAsset } from '../console/build.js';
import { serveConsole } from './console-assets.js';
import { lambdaContext } from './lambda-context.js';

export interface Front {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** CloudFront path patterns: `*` matches any characters, `/` included. */
export const patternMatcher = (patterns: readonly string[]): ((path: string) => boolean) => {
  const regexes = patterns.map(
    (p) =>
      new RegExp(
        `^${p
          .split('*')
          .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*')}$`,
      ),
  );
  return (path) => regexes.some((r) => r.test(path));
};

const unavailable = (res: ServerResponse, what: string): void => {
  if (res.headersSent) return void res.destroy();
  res.writeHead(503, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ error: { code: 'SERVICE_UNAVAILABLE', message: `The local ${what} is not answering.` } }));
};

const ENVELOPE_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};

/**
 * How much the front gives serverless-offline at once (local/admission.ts). Measured with `npm run bench:overload`
 * on 2 cores: see docs/decisions.md, "Overload of the local stack".
 */
export const DEFAULT_ADMISSION: AdmissionLimits = { maxInFlight: 8, maxQueued: 64, maxWaitMs: 500, healthSlots: 2 };

/**
 * The agents’ protocol has a gate of its own: 64 more at once, and a burst (100 agents completing together) waits its
 * turn instead of being shed; in the cloud API Gateway's default throttle (10,000 requests/s) is far above it.
 */
export const AGENT_ADMISSION: AdmissionLimits = {
  maxInFlight: 64,
  maxQueued: 10_000,
  maxWaitMs: Number.POSITIVE_INFINITY,
  healthSlots: 0,
};

/** A request shed by the admission gate: 503 in the envelope, retry in a second (readable by allowed origins). */
const overloaded = (
  res: ServerResponse,
  reason: 'queue_full' | 'queue_timeout',
  cors: (h: IncomingHttpHeaders) => IncomingHttpHeaders,
  origin: string | undefined,
): void => {
  const body = JSON.stringify({
    error: {
      code: 'SERVICE_UNAVAILABLE',
      message: 'The service is busy; retry in a second.',
      details: { source: 'gateway', reason },
    },
  });
  const readable =
    origin === undefined
      ? {}
      : {
          'access-control-allow-origin': origin,
          'access-control-allow-credentials': 'true',
          'access-control-expose-headers': CORS_EXPOSE_HEADERS.join(', '),
          vary: 'origin',
        };
  res.writeHead(503, {
    ...ENVELOPE_HEADERS,
    ...(cors(readable) as Record<string, string>),
    'retry-after': '1',
    'content-length': String(Buffer.byteLength(body)),
  });
  res.end(body);
};

/**
 * A shed request of a client over its own rate limit: the service's plain-text 429 (functions/shared/middlewares.ts
 * tooManyRequests), which that client would get where no gate stood in front of the limiter.
 */
const overLimit = (
  res: ServerResponse,
  retryAfterSeconds: number,
  cors: (h: IncomingHttpHeaders) => IncomingHttpHeaders,
  origin: string | undefined,
): void => {
  const body = 'Too Many Requests: slow down and retry after the Retry-After seconds.';
  const readable =
    origin === undefined
      ? {}
      : {
          'access-control-allow-origin': origin,
          'access-control-allow-credentials': 'true',
          'access-control-expose-headers': CORS_EXPOSE_HEADERS.join(', '),
          vary: 'origin',
        };
  res.writeHead(429, {
    'content-type': 'text/plain; charset=utf-8',
    ...(cors(readable) as Record<string, string>),
    'retry-after': String(Math.max(1, retryAfterSeconds)),
    'x-ratelimit-remaining': '0',
    'content-length': String(Buffer.byteLength(body)),
  });
  res.end(body);
};

/**
 * Forwards through the admission gate: waits for a slot (held until the response closes, however it ends), or
 * answers when the gate sheds the request: 429 to a client over its own rate limit, 503 to others. A client that
 * leaves while waiting gets nothing.
 */
const throughGate = (
  gates: { readonly api: Admission; readonly agent: Admission; readonly perAddress: AddressLimit },
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  cors: (h: IncomingHttpHeaders) => IncomingHttpHeaders,
  go: () => void,
): void => {
  const lane = laneOf(req.method ?? 'GET', path);
  if (lane === 'exempt') return go();
  const lifetime = new AbortController();
  res.once('close', () => lifetime.abort());
  const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
  const rate = lane === 'api' ? gates.perAddress.take(req.socket.remoteAddress ?? '') : undefined;
  const entered = lane === 'agent' ? gates.agent.enter('api', lifetime.signal) : gates.api.enter(lane, lifetime.signal);
  entered.then(
    (ticket) => {
      if (ticket.admitted) go();
      else if (ticket.reason === 'left') return;
      else if (rate !== undefined && !rate.within) overLimit(res, rate.retryAfterSeconds, cors, origin);
      else overloaded(res, ticket.reason, cors, origin);
    },
    () => unavailable(res, 'front'),
  );
};

/**
 * serverless-offline's answer to a function that ran past its timeout: 200 with `{errorMessage: "[504] - Lambda
 * timeout.", errorType: "LambdaTimeoutError", ...}`. API Gateway answers 503 there: so does the front, in our envelope.
 */
export const timeoutAnswer = (body: string): string | undefined => {
  let parsed: { errorType?: unknown; errorMessage?: unknown } | null;
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    return undefined;
  }
  const timedOut =
    parsed !== null &&
    typeof parsed === 'object' &&
    (parsed.errorType === 'LambdaTimeoutError' || String(parsed.errorMessage ?? '').startsWith('[504]'));
  if (!timedOut) return undefined;
  return JSON.stringify({
    error: {
      code: 'SERVICE_UNAVAILABLE',
      message: 'The function did not answer in time; retry shortly.',
      details: { source: 'gateway' },
    },
  });
};

/** hapi's Boom answer (`{statusCode, error, message}`) as the service's envelope; undefined for anything else. */
export const platformAnswer = (status: number, body: string): string | undefined => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const boom = parsed as { statusCode?: unknown; error?: unknown; message?: unknown };
  if (
    typeof boom !== 'object' ||
    boom === null ||
    typeof boom.statusCode !== 'number' ||
    typeof boom.error !== 'string'
  )
    return undefined;
  const message =
    typeof boom.message === 'string' && boom.message !== boom.error
      ? `${boom.message}.`
      : 'The request could not be read (its path, query or headers are malformed).';
  const code = status === 404 ? 'NOT_FOUND' : 'VALIDATION_ERROR';
  return JSON.stringify({ error: { code, message, details: { source: 'gateway' } } });
};

/** Node's own refusals (headers over 16 KB, an unparsable request line) answered with the envelope, then closed. */
const clientError = (error: NodeJS.ErrnoException, socket: import('node:net').Socket): void => {
  if (!socket.writable) return void socket.destroy();
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const body = JSON.stringify({
    error: {
      code: 'VALIDATION_ERROR',
      message: tooLarge
        ? 'The request line and headers are larger than 16 KB.'
        : 'The request could not be parsed as HTTP.',
      details: { source: 'gateway' },
    },
  });
  const reason = tooLarge ? 'Request Header Fields Too Large' : 'Bad Request';
  const head = Object.entries({
    ...ENVELOPE_HEADERS,
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  })
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n');
  socket.end(`HTTP/1.1 ${status} ${reason}\r\n${head}\r\n\r\n${body}`);
};

/**
 * API Gateway hands a function the body as the text it received. serverless-offline parses `application/json`
 * bodies and passes scalars on parsed (`0` as a number, `"x"` as `x`), so the front hands such bodies over as
 * text, as the gateway does. The handlers never read the request's content type.
 */
const jsonAsText = (contentType: string | undefined): Record<string, string> =>
  contentType !== undefined && /^\s*application\/(vnd\.api\+)?json\s*(;|$)/i.test(contentType)
    ? { 'content-type': 'text/plain; charset=utf-8' }
    : {};

/**
 * serverless-offline answers every request that has an Origin with `Access-Control-Allow-Origin: <that origin>`
 * and credentials, whatever the configuration. The front, like API Gateway in the cloud, lets a browser read an
 * answer only for the configured origins (CORS_ORIGINS): for any other origin the CORS headers are removed.
 */
const corsFor =
  (allowed: ReadonlySet<string>, origin: string | undefined) =>
  (headers: IncomingHttpHeaders): IncomingHttpHeaders => {
    if (origin === undefined || allowed.has(origin.toLowerCase())) return headers;
    return Object.fromEntries(
      Object.entries(headers).filter(([name]) => !name.toLowerCase().startsWith('access-control-')),
    );
  };

/** A CORS preflight answered at the edge, as API Gateway's `httpApi.cors` does, by the shell's own CORS middleware. */
const preflightAt = (origins: readonly string[]) => {
  const answer = bindPreflight({
    rateGate: async () => ({ allowed: true, remaining: 1, retryAfterSeconds: 0 }),
    startupProblems: () => [],
    cors: corsSettings(origins),
  });
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]),
    );
    const path = new URL(req.url ?? '/', 'http://local').pathname;
    const event = {
      version: '2.0',
      rawPath: path,
      rawQueryString: '',
      headers,
      requestContext: { http: { method: 'OPTIONS', path, sourceIp: req.socket.remoteAddress ?? '127.0.0.1' } },
    } as unknown as APIGatewayProxyEventV2;
    const reply = await answer(event, lambdaContext('front'));
    res.writeHead(reply.statusCode ?? 204, (reply.headers ?? {}) as Record<string, string>);
    res.end();
  };
};

const forward = (
  req: IncomingMessage,
  res: ServerResponse,
  target: URL,
  what: string,
  cors: (h: IncomingHttpHeaders) => IncomingHttpHeaders,
): void => {
  const remote = req.socket.remoteAddress ?? '127.0.0.1';
  const upstream = request(
    {
      host: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers: {
        ...req.headers,
        ...jsonAsText(req.headers['content-type']),
        // The caller's address as the gateway would see it; a client-sent X-Forwarded-For is not trusted.
        'x-forwarded-for': remote,
        'x-forwarded-proto': 'http',
        'x-forwarded-host': req.headers.host ?? '',
      },
    },
    (upstreamRes) => {
      const status = upstreamRes.statusCode ?? 502;
      // serverless-offline (hapi) refuses some requests before any handler runs (bad percent-encoding, a cookie
      // or content-type header it cannot parse) with its own `{statusCode, error, message}`: answer those with
      // the service's envelope, as a handler would.
      // (Only uncompressed answers are looked at: the function's own, compressed for a client that accepts it,
      // pass through byte for byte.)
      const encoded = (upstreamRes.headers['content-encoding'] ?? 'identity') !== 'identity';
      const json = String(upstreamRes.headers['content-type'] ?? '').startsWith('application/json');
      // Every answer of a function carries x-request-id; a 200 without one is serverless-offline's own.
      const platform200 = status === 200 && upstreamRes.headers['x-request-id'] === undefined;
      if (((status >= 400 && status < 500) || platform200) && !encoded && json) {
        const parts: Buffer[] = [];
        upstreamRes.on('data', (c: Buffer) => parts.push(c));
        upstreamRes.on('end', () => {
          const bytes = Buffer.concat(parts);
          const text = bytes.toString('utf8');
          const timedOut = platform200 ? timeoutAnswer(text) : undefined;
          const rewritten = timedOut ?? (platform200 ? undefined : platformAnswer(status, text));
          if (rewritten === undefined) {
            res.writeHead(status, cors(upstreamRes.headers));
            res.end(bytes);
          } else {
            const headers = timedOut === undefined ? ENVELOPE_HEADERS : { ...ENVELOPE_HEADERS, 'retry-after': '1' };
            res.writeHead(timedOut === undefined ? status : 503, {
              ...headers,
              'content-length': String(Buffer.byteLength(rewritten)),
            });
            res.end(rewritten);
          }
        });
        return;
      }
      res.writeHead(status, cors(upstreamRes.headers));
      res.flushHeaders();
      upstreamRes.pipe(res);
    },
  );
  upstream.on('error', () => unavailable(res, what));
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
};

/** Where agents open their WebSocket on the local origin (AGENT_SOCKET_URL); the front proxies the upgrade. */
export const AGENT_SOCKET_PATH = '/api/v1/agent/socket';

/**
 * A WebSocket upgrade at AGENT_SOCKET_PATH, proxied byte for byte to serverless-offline's WebSocket server (API
 * Gateway's WebSocket API in the cloud): the handshake with its headers (the agent token), then both directions
 * piped. Any other path is refused as API Gateway would, before a handshake.
 */
const proxyUpgrade =
  (target: URL | undefined, open: Set<Socket>) =>
  (req: IncomingMessage, client: Socket, head: Buffer): void => {
    const url = new URL(req.url ?? '/', 'http://local');
    if (target === undefined || url.pathname !== AGENT_SOCKET_PATH) {
      client.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    const upstream = connect(Number(target.port), target.hostname, () => {
      const lines = [`${req.method ?? 'GET'} /${url.search} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i]!;
        if (name.toLowerCase() !== 'x-forwarded-for') lines.push(`${name}: ${req.rawHeaders[i + 1]}`);
      }
      lines.push(`x-forwarded-for: ${req.socket.remoteAddress ?? '127.0.0.1'}`);
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.setNoDelay(true);
    client.setNoDelay(true);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
    }
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
  };

export const startFront = async (options: {
  port: number;
  /** A server already listening on 127.0.0.1 at `port` (reserved early by the caller): the front serves on it. */
  listening?: Server;
  apiUrl: string;
  /** serverless-offline's WebSocket server (the agents' socket); absent: upgrades are refused. */
  socketUrl?: string;
  streamUrl: string;
  streamPatterns: readonly string[];
  /** The browser origins allowed to read answers (CORS_ORIGINS); none when absent. */
  corsOrigins?: readonly string[];
  /** How many API requests serverless-offline is given at once; DEFAULT_ADMISSION when absent. */
  admission?: AdmissionLimits;
  /** The service's general rate limit per address (shed requests over it answer 429); 100/s, burst 200 if absent. */
  rateLimit?: { readonly ratePerSecond: number; readonly burst: number };
  /** The web console's files by path (`/`, `/assets/...`); none: those paths go to the API like any other. */
  console?: ReadonlyMap<string, ConsoleAsset>;
}): Promise<Front> => {
  const isStream = patternMatcher(options.streamPatterns);
  const origins = options.corsOrigins ?? [];
  const allowed = new Set(origins.map((o) => o.toLowerCase()));
  const preflight = preflightAt(origins);
  const api = new URL(options.apiUrl);
  const streams = new URL(options.streamUrl);
  const gates = {
    api: createAdmission(options.admission ?? DEFAULT_ADMISSION),
    agent: createAdmission(AGENT_ADMISSION),
    perAddress: createAddressLimit(options.rateLimit ?? { ratePerSecond: 100, burst: 200 }),
  };
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    res.socket?.setNoDelay(true);
    if (req.method === 'OPTIONS') {
      preflight(req, res).catch(() => unavailable(res, 'CORS preflight'));
      return;
    }
    const path = new URL(req.url ?? '/', 'http://local').pathname;
    if (options.console !== undefined && serveConsole(options.console, req, res, path)) return;
    const cors = corsFor(allowed, typeof req.headers.origin === 'string' ? req.headers.origin : undefined);
    if (isStream(path)) forward(req, res, streams, 'stream function', cors);
    else throughGate(gates, req, res, path, cors, () => forward(req, res, api, 'API (serverless-offline)', cors));
  };
  const upgraded = new Set<Socket>();
  const onUpgrade = proxyUpgrade(options.socketUrl === undefined ? undefined : new URL(options.socketUrl), upgraded);
  const serve = (server: Server): Server => {
    server.on('request', onRequest);
    server.on('upgrade', onUpgrade);
    server.keepAliveTimeout = 65_000;
    server.on('clientError', clientError);
    return server;
  };
  const listen = (port: number, host: string): Promise<Server> =>
    new Promise((resolve, reject) => {
      const server = serve(createServer());
      server.once('error', reject);
      server.listen(port, host, () => resolve(server));
    });
  // Both loopback addresses, so `localhost` works whichever one a client resolves it to.
  const primary = options.listening === undefined ? await listen(options.port, '127.0.0.1') : serve(options.listening);
  const { port } = primary.address() as AddressInfo;
  const servers = [primary];
  await listen(port, '::1').then(
    (s) => servers.push(s),
    () => undefined,
  );
  return {
    url: `http://localhost:${port}`,
    port,
    stop: async () => {
      for (const socket of upgraded) socket.destroy();
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((done) => {
              server.closeAllConnections();
              server.close(() => done());
            }),
        ),
      );
    },
  };
};
