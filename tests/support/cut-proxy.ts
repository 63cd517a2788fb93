// A TCP proxy between agents and the local stack that a test can take away: `cut(ms)` drops every open connection
// (HTTP and WebSocket alike) and refuses new ones for a while, as a network outage would; `refuseUpgrades(true)`
// answers every WebSocket upgrade 403 and forwards everything else, as a proxy that blocks WebSockets does. It reads
// each connection's first request head whole and forwards plain requests with `connection: close`, so every request
// gets its own connection and no upgrade slips through on a kept-alive one.
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface CutProxy {
  readonly url: string;
  readonly port: number;
  /** Drops every connection and refuses new ones for `ms`. */
  cut(ms: number): void;
  refuseUpgrades(refuse: boolean): void;
  /** Upgrade requests seen (refused or not). */
  readonly upgrades: () => number;
  close(): Promise<void>;
}

export const startCutProxy = async (upstream: { host: string; port: number }): Promise<CutProxy> => {
  const open = new Set<Socket>();
  let downUntil = 0;
  let refusing = false;
  let upgrades = 0;
  const server: Server = createServer((client) => {
    if (Date.now() < downUntil) return void client.destroy();
    // The request head may arrive in several chunks: it is read whole before deciding (upgrade or not).
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end === -1 && buffered.length < 65_536) return;
      client.off('data', onData);
      client.pause();
      const head = buffered.subarray(0, end === -1 ? buffered.length : end).toString('latin1');
      const upgrade = /\r\nupgrade:\s*websocket/i.test(head);
      if (upgrade) upgrades += 1;
      if (upgrade && refusing) {
        client.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
        return;
      }
      // One request per connection: a kept-alive connection could carry a later upgrade past this check.
      const first =
        upgrade || end === -1
          ? buffered
          : Buffer.concat([
              Buffer.from(
                `${head
                  .split('\r\n')
                  .filter((line) => !/^(connection|keep-alive):/i.test(line))
                  .join('\r\n')}\r\nconnection: close`,
                'latin1',
              ),
              buffered.subarray(end),
            ]);
      const server = connect(upstream.port, upstream.host, () => {
        server.write(first);
        client.pipe(server);
        server.pipe(client);
        client.resume();
      });
      for (const socket of [client, server]) {
        open.add(socket);
        socket.on('close', () => open.delete(socket));
        socket.on('error', () => undefined);
      }
      server.on('close', () => client.destroy());
      client.on('close', () => server.destroy());
    };
    client.on('data', onData);
    client.on('error', () => undefined);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    cut: (ms) => {
      downUntil = Date.now() + ms;
      for (const socket of open) socket.destroy();
    },
    refuseUpgrades: (refuse) => {
      refusing = refuse;
    },
    upgrades: () => upgrades,
    close: async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
};
