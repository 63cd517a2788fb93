// The single local origin (http://localhost:3000 by default): stream paths go to the stream runner, everything
// else to serverless-offline; responses are piped through as they arrive, so event streams are not buffered.
// In the cloud, CloudFront plays this part with the same path patterns (serverless.yml).
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Front {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** CloudFront path patterns: `*` matches any characters, `/` included. */
export const patternMatcher = (patterns: readonly string[]): ((path: string) => boolean) => {
  const regexes = patterns.map(
    (p) => new RegExp(`^${p.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`),
  );
  return (path) => regexes.some((r) => r.test(path));
};

const unavailable = (res: ServerResponse, what: string): void => {
  if (res.headersSent) return void res.destroy();
  res.writeHead(503, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ error: { code: 'SERVICE_UNAVAILABLE', message: `The local ${what} is not answering.` } }));
};

const forward = (req: IncomingMessage, res: ServerResponse, target: URL, what: string): void => {
  const remote = req.socket.remoteAddress ?? '127.0.0.1';
  const upstream = request(
    {
      host: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers: {
        ...req.headers,
        // The caller's address as the gateway would see it; a client-sent X-Forwarded-For is not trusted.
        'x-forwarded-for': remote,
        'x-forwarded-proto': 'http',
        'x-forwarded-host': req.headers.host ?? '',
      },
    },
    (upstreamRes) => {
      res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
      res.flushHeaders();
      upstreamRes.pipe(res);
    },
  );
  upstream.on('error', () => unavailable(res, what));
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
};

export const startFront = async (options: {
  port: number;
  apiUrl: string;
  streamUrl: string;
  streamPatterns: readonly string[];
}): Promise<Front> => {
  const isStream = patternMatcher(options.streamPatterns);
  const api = new URL(options.apiUrl);
  const streams = new URL(options.streamUrl);
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    res.socket?.setNoDelay(true);
    const path = new URL(req.url ?? '/', 'http://local').pathname;
    if (isStream(path)) forward(req, res, streams, 'stream function');
    else forward(req, res, api, 'API (serverless-offline)');
  };
  const listen = (port: number, host: string): Promise<Server> =>
    new Promise((resolve, reject) => {
      const server = createServer(onRequest);
      server.keepAliveTimeout = 65_000;
      server.once('error', reject);
      server.listen(port, host, () => resolve(server));
    });
  // Both loopback addresses, so `localhost` works whichever one a client resolves it to.
  const primary = await listen(options.port, '127.0.0.1');
  const { port } = primary.address() as AddressInfo;
  const servers = [primary];
  await listen(port, '::1').then((s) => servers.push(s), () => undefined);
  return {
    url: `http://localhost:${port}`,
    port,
    stop: async () => {
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
