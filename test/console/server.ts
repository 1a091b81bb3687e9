// A real server for the browser suite: `node src/main.ts` on a fresh PostgreSQL database and the Redis server, with
// the operator API on and the sandbox platform approving templates and reporting messages by itself.
import { createPostgresDatabase } from '../helpers/database.ts';
import { freePort, startServer } from '../helpers/process.ts';

export const ADMIN_TOKEN = 'console-suite-admin-token';

export interface ConsoleServer {
  baseUrl: string;
  /** The server's own PostgreSQL database, for a test that must move time (a window closing). */
  databaseUrl: string;
  /** The operator API (/admin/v1) with the admin token. */
  admin<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** The public API (/v1) with an API key. */
  api<T = any>(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  output(): string;
  stop(): Promise<void>;
}

async function call(url: string, method: string, token: string, body?: unknown) {
  const response = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(method === 'POST' && url.includes('/send') ? { 'idempotency-key': crypto.randomUUID() } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

export async function startConsoleServer(env: Record<string, string> = {}): Promise<ConsoleServer> {
  const database = await createPostgresDatabase();
  const port = await freePort();
  const server = await startServer({
    DATABASE_URL: database.url,
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    ADMIN_TOKEN,
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    SANDBOX_AUTO_REVIEW_MS: '200',
    SANDBOX_AUTO_REPORTS_MS: '300',
    ...env,
  }).catch(async (error) => {
    await database.drop();
    throw error;
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    databaseUrl: database.url,
    admin: (method, path, body) => call(`${baseUrl}/admin/v1${path}`, method, ADMIN_TOKEN, body),
    api: (key, method, path, body) => call(`${baseUrl}${path}`, method, key, body),
    output: server.output,
    async stop() {
      await server.stop();
      await database.drop();
    },
  };
}
