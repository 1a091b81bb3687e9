// PostgreSQL behind a TCP proxy that the test cuts and restores (decisions D24): the server never exits, answers 503
// `service_unavailable` with Retry-After while the database is away, says so on /readyz, comes back by itself
// within 3 s of the database, and loses no acknowledged write. Also: single connection resets during queries, and
// a start while the database is unreachable (migrations wait and retry).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase } from '../helpers/database.ts';
import { type ServerProcess, startServer } from '../helpers/process.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { delay, waitUntil } from '../helpers/wait.ts';

const onPostgres = process.env.TEST_DB === 'postgres';
/** Until the next wall-clock second: a fresh rate-limit window (decisions §4). */
const nextWindow = () => delay(1000 - (Date.now() % 1000) + 20);

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

describe.skipIf(!onPostgres)('a PostgreSQL outage', { timeout: 180_000 }, () => {
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let proxy: TcpProxy;
  let server: ServerProcess;
  let key: string;

  const call = async (method: string, path: string, body?: unknown, token = key): Promise<Answer> => {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
      // A request must be answered while the database is away, never held until it returns.
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
  };

  beforeAll(async () => {
    database = await createPostgresDatabase();
    proxy = await startTcpProxy({ port: Number(new URL(database.url).port || 5432) });
    // Unreachable at start: the process waits and retries its migrations instead of exiting.
    proxy.refuse();
    const starting = startServer({
      DATABASE_URL: proxy.url(database.url),
      ADMIN_TOKEN: 'secret',
      WORKER_POLL_MS: '50',
    });
    // Restored only after the process has tried (and been refused) twice.
    await waitUntil(() => proxy.refused() >= 2, { timeoutMs: 60_000, intervalMs: 50, message: 'two refused attempts' });
    proxy.restore();
    server = await starting;
    expect(server.output()).toContain('database unreachable at start; retrying migrations');
    const org = (await call('POST', '/admin/v1/organizations', { name: 'Outage', plan: 'scale' }, 'secret')).body;
    key = (await call('POST', `/admin/v1/organizations/${org.id}/api-keys`, {}, 'secret')).body.key;
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await proxy?.close();
    await database?.drop();
  });

  it('answers 503 during the cut, recovers within 3 s of the database coming back, and loses no write', async () => {
    const before = await call('POST', '/v1/contacts', { first_name: 'Before', phone: '+15550200001' });
    expect(before.status).toBe(201);
    expect((await call('GET', '/readyz')).status).toBe(200);

    proxy.refuse();
    const during: Answer[] = [];
    const cutUntil = Date.now() + 5000;
    while (Date.now() < cutUntil) {
      during.push(await call('GET', `/v1/contacts/${before.body.id}`));
      during.push(await call('POST', '/v1/contacts', { first_name: 'During' }));
      await delay(100); // pacing: traffic throughout the cut
    }
    const ready = await call('GET', '/readyz');
    const live = await call('GET', '/livez');

    proxy.restore();
    const restoredAt = Date.now();
    const { recoveredAfter } = await waitUntil(
      async () =>
        (await call('GET', `/v1/contacts/${before.body.id}`)).status === 200 && {
          recoveredAfter: Date.now() - restoredAt,
        },
      { intervalMs: 50, message: 'the first read after the database is back' },
    ).catch(() => ({ recoveredAfter: Number.POSITIVE_INFINITY }));
    const after = await call('POST', '/v1/contacts', { first_name: 'After', phone: '+15550200002' });

    expect(server.child.exitCode).toBeNull();
    expect(during.length).toBeGreaterThan(10);
    for (const answer of during) {
      expect(answer.status).toBe(503);
      expect(answer.body).toEqual({ detail: 'service_unavailable' });
      expect(answer.headers.get('retry-after')).toBe('1');
    }
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'not_ready', checks: { database: 'failing' } });
    expect(live.status).toBe(200);
    expect(recoveredAfter).toBeLessThan(3000);
    expect(after.status).toBe(201);
    expect((await call('GET', '/readyz')).body).toEqual({
      status: 'ready',
      checks: { database: 'ok', migrations: 'ok' },
    });
    // Both acknowledged writes are there; nothing written during the cut was acknowledged.
    const list = await call('GET', '/v1/contacts?limit=100');
    const names = list.body.items.map((contact: { first_name: string }) => contact.first_name).sort();
    expect(names).toEqual(['After', 'Before']);
    expect(server.output()).toContain('worker paused');
    expect(server.output()).not.toMatch(/Unhandled|uncaught/i);
  });

  it('survives connections reset during queries, one at a time, and answers normally afterwards', async () => {
    // /readyz spends no rate budget (the organization has 20 requests a second).
    const untilHealthy = () =>
      waitUntil(async () => (await call('GET', '/readyz')).status === 200, { intervalMs: 50, message: 'recovery' });
    let cutDuringQuery = 0;
    for (let round = 0; round < 8; round++) {
      await untilHealthy();
      const inFlight = Array.from({ length: 6 }, (_, index) =>
        call('POST', '/v1/contacts', { first_name: `Reset ${round}.${index}` }).catch((error: Error) => error),
      );
      await delay(5 + round * 3); // the cut lands at a different point of the requests each round
      proxy.cut();
      const answers = await Promise.all(inFlight);
      cutDuringQuery += answers.filter((answer) => (answer as Answer).status === 503).length;
      for (const answer of answers) {
        // Each request either completed or was answered 503; none hangs, none gets a 500.
        expect(answer).not.toBeInstanceOf(Error);
        expect([201, 503]).toContain((answer as Answer).status);
      }
      expect(server.child.exitCode).toBeNull();
      await delay(400); // pacing: stays within the organization's rate budget
    }
    // The cuts did land on requests in flight (they were answered 503, not 500 and not by a dead process).
    expect(cutDuringQuery).toBeGreaterThan(0);
    await untilHealthy();
    expect(server.child.exitCode).toBeNull();
    expect(server.output()).not.toMatch(/Unhandled|uncaught/i);
  });

  it('answers 503 without waiting for a database that accepts connections and never answers', async () => {
    await nextWindow();
    expect((await call('GET', '/v1/me')).status).toBe(200);
    proxy.hang();
    const answers: Answer[] = [];
    for (let index = 0; index < 5; index++) answers.push(await call('GET', '/v1/me'));
    proxy.restore();
    // Each answer came (the 10 s client timeout never fired): the connect timeout bounds the wait.
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(answer.body).toEqual({ detail: 'service_unavailable' });
    }
    const status = await waitUntil(async () => (await call('GET', '/readyz')).status === 200 && 200, {
      intervalMs: 50,
      message: 'ready again',
    }).catch(() => 503);
    expect(status).toBe(200);
    await nextWindow();
    expect((await call('GET', '/v1/me')).status).toBe(200);
    expect(server.child.exitCode).toBeNull();
  });
});
