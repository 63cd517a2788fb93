// Serves the streaming function locally: each HTTP request becomes a Lambda function-URL event (payload 2.0)
// and is handed, with a LocalResponseStream, to the handler, exactly as the Lambda runtime would.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { LocalResponseStream } from './lambda-streaming.js';
import { lambdaContext } from './lambda-context.js';

export type LocalStreamHandler = (
  event: APIGatewayProxyEventV2,
  stream: never,
  context: Context,
) => Promise<void> | void;

const readBody = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

export const toFunctionUrlEvent = (req: IncomingMessage, body: Buffer): APIGatewayProxyEventV2 => {
  const url = new URL(req.url ?? '/', 'http://local');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && name !== 'cookie') headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams)
    query[name] = query[name] === undefined ? value : `${query[name]},${value}`;
  const now = new Date();
  const forwardedFor = headers['x-forwarded-for']?.split(',')[0]?.trim();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    cookies: req.headers.cookie
      ?.split(';')
      .map((c) => c.trim())
      .filter(Boolean),
    headers,
    queryStringParameters: Object.keys(query).length > 0 ? query : undefined,
    requestContext: {
      accountId: 'anonymous',
      apiId: 'local',
      domainName: headers['host'] ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method: req.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: forwardedFor ?? req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
    body: body.length > 0 ? body.toString('base64') : undefined,
    isBase64Encoded: body.length > 0,
  };
};

export interface StreamRunner {
  readonly url: string;
  stop(): Promise<void>;
}

export const startStreamRunner = async (options: {
  handler: LocalStreamHandler;
  port?: number;
  functionName?: string;
  log?: (message: string) => void;
}): Promise<StreamRunner> => {
  const log = options.log ?? (() => undefined);
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      res.socket?.setNoDelay(true);
      const stream = new LocalResponseStream(res);
      try {
        await options.handler(
          toFunctionUrlEvent(req, body),
          stream as never,
          lambdaContext(options.functionName ?? 'stream'),
        );
      } catch (error) {
        if (!res.headersSent) {
          res.writeHead(502, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { code: 'INTERNAL_ERROR', message: 'The streaming function failed.' } }));
        } else if (!res.writableEnded) {
          res.destroy();
        }
        if ((error as Error).message !== 'client disconnected')
          log(`stream function failed: ${(error as Error).stack ?? String(error)}`);
      }
      if (!res.writableEnded && !res.destroyed) res.end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
};
