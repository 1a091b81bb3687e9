// An integrator's webhook receiver on 127.0.0.1: a real HTTP server that records every request and answers as the
// test tells it (a status, a delay, or no answer at all). `verify` checks a request the way a receiver would, with
// the Standard Webhooks specification's own library, not with our signing code.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { waitForValue } from './wait.ts';

export interface ReceivedRequest {
  path: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  receivedAt: number;
}

export type Answer = { status: number; delayMs?: number; body?: string; headers?: Record<string, string> } | 'hang';

/** A connection the receiver accepted: closed by the client (its FIN came first) or by the server. */
export interface ReceivedConnection {
  closed: boolean;
  closedBy: 'client' | 'server' | undefined;
}

export interface WebhookReceiver {
  baseUrl: string;
  requests: ReceivedRequest[];
  /** Every connection accepted, in order. */
  connections: ReceivedConnection[];
  /** How to answer requests to `path` (default: 200 to every path). */
  answer(path: string, answer: Answer | ((request: ReceivedRequest) => Answer)): void;
  /** Requests to one path. */
  at(path: string): ReceivedRequest[];
  /** Waits until `count` requests reached `path`. */
  waitFor(path: string, count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** Verifies a received request with `standardwebhooks` and returns the parsed event; throws when it does not verify. */
export function verify(secret: string, request: ReceivedRequest): any {
  return new Webhook(secret).verify(request.body, request.headers);
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const answers = new Map<string, Answer | ((request: ReceivedRequest) => Answer)>();
  const hanging = new Set<ServerResponse>();
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received: ReceivedRequest = {
        path: request.url ?? '/',
        method: request.method ?? '',
        headers: Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)])),
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      };
      requests.push(received);
      const configured = answers.get(received.path) ?? { status: 200 };
      const answer = typeof configured === 'function' ? configured(received) : configured;
      if (answer === 'hang') {
        hanging.add(response);
        response.on('close', () => hanging.delete(response));
        return;
      }
      const reply = () => {
        response.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
        response.end(answer.body ?? 'ok');
      };
      if (answer.delayMs) setTimeout(reply, answer.delayMs);
      else reply();
    });
  });
  // The server keeps Node's defaults (keep-alive timeout 5 s): the receiver integrators run.
  const connections: ReceivedConnection[] = [];
  server.on('connection', (socket) => {
    const connection: ReceivedConnection = { closed: false, closedBy: undefined };
    connections.push(connection);
    socket.once('end', () => {
      connection.closedBy ??= 'client';
    });
    socket.once('close', () => {
      connection.closedBy ??= 'server';
      connection.closed = true;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const at = (path: string) => requests.filter((request) => request.path === path);
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    connections,
    answer: (path, answer) => void answers.set(path, answer),
    at,
    async waitFor(path, count, timeoutMs = 20_000) {
      await waitForValue(
        () => at(path).length,
        (arrived) => arrived >= count,
        {
          message: `${count} requests at ${path} (the last value is how many arrived)`,
          timeoutMs,
        },
      );
      return at(path);
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
