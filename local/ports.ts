import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer } from 'node:net';

/** A TCP port nothing listens on right now (the OS picks it). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });

/**
 * An HTTP server listening on a port the OS picked, with no handler yet: the port is held from now on. (A port
 * freePort found free and left unbound for seconds is, once in a while, taken by another process meanwhile.)
 */
export const reservePort = (host = '127.0.0.1'): Promise<{ server: HttpServer; port: number }> =>
  new Promise((resolve, reject) => {
    const server = createHttpServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      if (typeof address === 'object' && address !== null) resolve({ server, port: address.port });
      else server.close(() => reject(new Error('no port')));
    });
  });

/** True when something accepts connections on the port. */
export const portInUse = (port: number, host = '127.0.0.1'): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(true));
    server.listen(port, host, () => server.close(() => resolve(false)));
  });

export const waitFor = async (
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 100,
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} did not start within ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
};
