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

/** The test's own share of an organization's 20 requests a second: the page it drives needs the rest. */
const TEST_CALLS_PER_SECOND = 6;
const recentCalls = new Map<string, number[]>();

/** Waits until this key has made fewer than TEST_CALLS_PER_SECOND calls in the last second, then counts one. */
async function takeTurn(token: string): Promise<void> {
  for (;;) {
    const now = Date.now();
    const recent = (recentCalls.get(token) ?? []).filter((at) => now - at < 1000);
    if (recent.length < TEST_CALLS_PER_SECOND) {
      recent.push(now);
      recentCalls.set(token, recent);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000 - (now - (recent[0] as number)) + 5));
  }
}

/**
 * One API call with a key, as an integrator's client makes it. The test's calls (polling loops among them) share the
 * organization's budget with the page under test, so they keep to a share of it; a 429 is still waited out for its
 * `Retry-After` and sent again, up to 10 times, like the SDK does.
 */
async function call(url: string, method: string, token: string, body?: unknown) {
  const idempotencyKey = method === 'POST' && url.includes('/send') ? crypto.randomUUID() : undefined;
  for (let attempt = 0; ; attempt++) {
    await takeTurn(token);
    const response = await fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status === 429 && attempt < 10) {
      await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after') ?? 1) * 1000));
      continue;
    }
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }
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
