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
