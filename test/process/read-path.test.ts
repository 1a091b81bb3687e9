// D20 and D23 on real processes: API keys cached in each server process are dropped on the very next request
// after a revocation or an organization change made through another process, and an unreachable Redis neither
// stops a server nor hangs its requests (a per-process budget meanwhile, the shared one again once it returns).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase } from '../helpers/database.ts';
import { freePort, runCli, type ServerProcess, startServer } from '../helpers/process.ts';
import { waitForValue } from '../helpers/wait.ts';

const onPostgres = process.env.TEST_DB === 'postgres';
const ADMIN = 'secret';
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function request(server: ServerProcess, method: string, path: string, key: string, body?: unknown) {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : null,
    // A request that hangs fails the test instead of waiting for the test's timeout.
    signal: AbortSignal.timeout(5000),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function startServers(env: Record<string, string>, count = 2) {
  const database = await createPostgresDatabase();
  const servers = await Promise.all(
    Array.from({ length: count }, () =>
      startServer({ DATABASE_URL: database.url, ADMIN_TOKEN: ADMIN, ...env }, [
        'src/cli/main.ts',
        'serve',
        '--no-worker',
      ]),
    ),
  );
  cleanups.push(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await database.drop();
  });
  const [first] = servers as [ServerProcess];
  const admin = (method: string, path: string, body?: unknown) =>
    request(first, method, `/admin/v1${path}`, ADMIN, body);
  const org = async () => {
    const created = await admin('POST', '/organizations', { name: 'Cached', plan: 'scale' });
    const key = await admin('POST', `/organizations/${created.body.id}/api-keys`, {});
    return { orgId: created.body.id as string, key: key.body.key as string, keyId: key.body.id as string };
  };
  return { servers, admin, org, databaseUrl: database.url };
}

/** Forty requests in one wall-clock second, spread over the servers; how many were let through. */
async function burst(servers: ServerProcess[], key: string): Promise<number | undefined> {
  await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
  const started = Math.floor(Date.now() / 1000);
  const responses = await Promise.all(
    Array.from({ length: 40 }, (_, index) => request(servers[index % servers.length]!, 'GET', '/v1/me', key)),
  );
  if (Math.floor(Date.now() / 1000) !== started) return undefined; // straddled two windows: not a measurement
  for (const response of responses) expect([200, 429]).toContain(response.status);
  return responses.filter((response) => response.status === 200).length;
}

describe.skipIf(!onPostgres || !process.env.TEST_REDIS_URL)(
  'two server processes on one Redis',
  { timeout: 120_000 },
  () => {
    it('refuse a key revoked through the other process on its very next request, and see a suspension at once', async () => {
      const { servers, admin, org, databaseUrl } = await startServers({ REDIS_URL: process.env.TEST_REDIS_URL! });
      const [a, b] = servers as [ServerProcess, ServerProcess];
      const first = await org();
      const second = await admin('POST', `/organizations/${first.orgId}/api-keys`, {});
      // Both processes have resolved (and cached) both keys.
      for (const server of servers) {
        for (const key of [first.key, second.body.key]) {
          expect((await request(server, 'GET', '/v1/me', key)).status).toBe(200);
          expect((await request(server, 'GET', '/v1/me', key)).status).toBe(200);
        }
      }
      // A contact read with a cached key starts before its key check: the check still decides the answer.
      const contact = await request(a, 'POST', '/v1/contacts', first.key, { first_name: 'Cached' });
      const contactPath = `/v1/contacts/${contact.body.id}`;
      for (const server of servers) {
        for (let i = 0; i < 2; i++) expect((await request(server, 'GET', contactPath, first.key)).status).toBe(200);
      }
      expect((await admin('DELETE', `/organizations/${first.orgId}/api-keys/${first.keyId}`)).status).toBe(204);
      expect((await request(b, 'GET', contactPath, first.key)).body).toEqual({ detail: 'invalid_api_key' });
      expect((await request(b, 'GET', '/v1/me', first.key)).body).toEqual({ detail: 'invalid_api_key' });
      expect((await request(a, 'GET', '/v1/me', first.key)).status).toBe(401);
      expect((await request(b, 'GET', '/v1/me', second.body.key)).status).toBe(200);

      expect((await admin('PATCH', `/organizations/${first.orgId}`, { subscription_status: 'suspended' })).status).toBe(
        200,
      );
      expect((await request(b, 'GET', contactPath, second.body.key)).body).toEqual({
        detail: 'subscription_required',
      });
      expect((await request(b, 'GET', '/v1/me', second.body.key)).body).toEqual({ detail: 'subscription_required' });
      expect((await admin('PATCH', `/organizations/${first.orgId}`, { subscription_status: 'active' })).status).toBe(
        200,
      );
      expect((await request(b, 'GET', '/v1/me', second.body.key)).status).toBe(200);

      // The operator CLI is a third process: its revocation reaches the servers through Redis too.
      const cli = runCli(['key', 'revoke', '--org', first.orgId, second.body.id], {
        DATABASE_URL: databaseUrl,
        REDIS_URL: process.env.TEST_REDIS_URL!,
      });
      expect(cli.status, cli.stderr).toBe(0);
      expect((await request(b, 'GET', '/v1/me', second.body.key)).status).toBe(401);
      expect((await request(a, 'GET', '/v1/me', second.body.key)).status).toBe(401);
    });
  },
);

/** A Redis of this test's own on `port` (the shared one on 6379 is never touched). */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}:\n${output}`)));
  });
  return child;
}

const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

describe.skipIf(!onPostgres || !hasRedisServer)('a Redis outage', { timeout: 180_000 }, () => {
  it('keeps both servers answering on a per-process budget, keeps revocations safe, and shares the budget again', async () => {
    const port = await freePort();
    let redis = await startRedis(port);
    cleanups.push(async () => {
      redis.kill('SIGKILL');
    });
    const { servers, admin, org } = await startServers({ REDIS_URL: `redis://127.0.0.1:${port}` });
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const measure = async (key: string, expected: (passed: number) => boolean) => {
      for (let attempt = 0; attempt < 8; attempt++) {
        const passed = await burst(servers, key);
        if (passed !== undefined && expected(passed)) return passed;
      }
      return undefined;
    };

    const readiness = async (server: ServerProcess) => {
      const response = await fetch(`${server.baseUrl}/readyz`);
      return { status: response.status, body: (await response.json()) as { checks: Record<string, string> } };
    };
    // A server that has just started answers /readyz 503 until its Redis probe has answered once (under load that can
    // follow the first request): wait for the state, then the outage below is what turns it.
    expect(
      await waitForValue(
        () => readiness(a),
        (ready) => ready.status === 200,
        { message: 'server a ready with Redis' },
      ),
    ).toMatchObject({ status: 200, body: { checks: { redis: 'ok' } } });

    const shared = await org();
    expect(await measure(shared.key, (passed) => passed === 20)).toBe(20);
    const revoked = await org();
    for (const server of servers) expect((await request(server, 'GET', '/v1/me', revoked.key)).status).toBe(200);

    redis.kill('SIGKILL');
    await new Promise((resolve) => redis.once('exit', resolve));
    // /readyz says the shared budget is gone (requests are still answered, below).
    expect(await readiness(a)).toMatchObject({ status: 503, body: { checks: { redis: 'failing' } } });
    // Every request is answered, quickly, by processes that keep running; each process spends its own budget,
    // so a burst over both lets more than 20 through.
    const local = await org();
    expect(await measure(local.key, (passed) => passed > 20)).toBeGreaterThan(20);
    // A revocation that cannot reach Redis is stored but not confirmed (503), and no process serves the key from
    // its cache meanwhile.
    const revoke = await admin('DELETE', `/organizations/${revoked.orgId}/api-keys/${revoked.keyId}`);
    expect(revoke.status).toBe(503);
    expect(revoke.body).toEqual({ detail: 'service_unavailable' });
    expect((await request(b, 'GET', '/v1/me', revoked.key)).status).toBe(401);
    expect((await request(a, 'GET', '/v1/me', revoked.key)).status).toBe(401);

    redis = await startRedis(port);
    const started = Date.now();
    const again = await org();
    expect(await measure(again.key, (passed) => passed === 20)).toBe(20);
    expect(Date.now() - started).toBeLessThan(30_000);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // the burst's window is spent
    for (const server of servers) {
      expect((await request(server, 'GET', '/v1/me', revoked.key)).status).toBe(401);
      expect((await request(server, 'GET', '/v1/me', again.key)).status).toBe(200);
      expect(server.child.exitCode).toBeNull();
    }
    expect(await readiness(b)).toMatchObject({ status: 200, body: { checks: { redis: 'ok' } } });
    expect(a.output()).toContain('redis unreachable');
    expect(a.output()).toContain('redis reachable again');
  });
});
