// A TCP proxy in front of a real server (PostgreSQL) for outage tests: it listens on a random 127.0.0.1 port and
// forwards every connection to the target. `cut()` resets every open connection, `refuse()` also refuses new ones
// (the port stays bound, so the same address comes back), `hang()` accepts new ones and never answers, and
// `restore()` forwards again.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** The target URL with host and port replaced by the proxy's. */
  url(targetUrl: string): string;
  /** Resets every open connection (both sides see ECONNRESET); new connections still work. */
  cut(): void;
  /** Resets every open connection and refuses new ones until restore(). */
  refuse(): void;
  /** Resets every open connection and accepts new ones without ever answering (a silent database). */
  hang(): void;
  restore(): void;
  /** Connections currently forwarded. */
  open(): number;
  /** Connections refused so far. */
  refused(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host?: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  const held = new Set<Socket>();
  let refusing = false;
  let hanging = false;
  let refusedCount = 0;
  const server: Server = createServer((client) => {
    if (refusing) {
      refusedCount++;
      client.resetAndDestroy();
      return;
    }
    if (hanging) {
      held.add(client);
      client.on('error', () => held.delete(client));
      client.on('close', () => held.delete(client));
      return;
    }
    const upstream = connect({ host: target.host ?? '127.0.0.1', port: target.port });
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      if (!client.destroyed) client.resetAndDestroy();
      if (!upstream.destroyed) upstream.resetAndDestroy();
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('proxy has no port');
  const cutAll = () => {
    for (const [client, upstream] of pairs) {
      client.resetAndDestroy();
      upstream.resetAndDestroy();
    }
    pairs.clear();
    for (const client of held) client.resetAndDestroy();
    held.clear();
  };
  return {
    port: address.port,
    url(targetUrl) {
      const url = new URL(targetUrl);
      url.hostname = '127.0.0.1';
      url.port = String(address.port);
      return url.toString();
    },
    cut: cutAll,
    refuse() {
      refusing = true;
      cutAll();
    },
    hang() {
      hanging = true;
      cutAll();
    },
    restore() {
      refusing = false;
      if (hanging) {
        hanging = false;
        for (const client of held) client.resetAndDestroy();
        held.clear();
      }
    },
    open: () => pairs.size,
    refused: () => refusedCount,
    close: () =>
      new Promise<void>((resolve) => {
        cutAll();
        server.close(() => resolve());
      }),
  };
}
