// The real process: first start with a demo organization, restart, graceful shutdown, CLI, and two processes
// sharing one rate budget through Redis.
import { spawnSync } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createPostgresDatabase } from '../helpers/database.ts';
import { freePort, runCli, startServer } from '../helpers/process.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { waitUntil } from '../helpers/wait.ts';

const onPGlite = process.env.TEST_DB !== 'postgres';

const get = async (url: string, key?: string) => {
  const response = await fetch(url, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: response.status, body: await response.json(), headers: response.headers };
};

describe.skipIf(!onPGlite)('on the embedded database', { timeout: 120_000 }, () => {
  it('makes a demo organization on first start, prints its key and a curl once, and keeps data across restarts', async () => {
    const dataDir = tempDir('crm-test-');
    // A fixed port: the demo admin's sign-in link is built from http://HOST:PORT (PUBLIC_URL unset).
    const first = await startServer({ DATA_DIR: dataDir, PORT: String(await freePort()) });
    const key = await waitUntil(
      () => /API key \(shown only this once\): (oak_[A-Za-z0-9_-]+)/.exec(first.output())?.[1],
      {
        message: 'the demo key in the output',
      },
    ).catch(() => undefined);
    expect(key, first.output()).toBeDefined();
    expect(first.output()).toContain(`curl -s ${first.baseUrl}/v1/me -H "Authorization: Bearer ${key}"`);
    const health = await get(`${first.baseUrl}/healthz`);
    expect(health.body).toEqual({ status: 'ok', database: 'pglite' });
    const me = await get(`${first.baseUrl}/v1/me`, key);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ name: 'Demo organization', trial: true });
    expect(me.headers.get('x-ratelimit-limit')).toBe('5');

    // decisions §17: the console's address and the demo admin's one-time sign-in link, beside the key.
    expect(first.output()).toContain(`The console: ${first.baseUrl}/app`);
    const link = /Sign in as admin@demo\.example: open this one-time link[^\n]*\n\s+(\S+)/.exec(first.output())?.[1];
    expect(link, first.output()).toMatch(new RegExp(`^${first.baseUrl}/app/set-password#token=sil_`));
    const token = new URL(link as string).hash.replace('#token=', '');
    const accepted = await fetch(`${first.baseUrl}/app/api/sign-in-links/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: first.baseUrl },
      body: JSON.stringify({ token, password: 'a demo password' }),
    });
    expect(accepted.status, await accepted.clone().text()).toBe(201);
    const cookie = accepted.headers
      .getSetCookie()
      .map((value) => value.split(';')[0])
      .join('; ');
    const session = await fetch(`${first.baseUrl}/app/api/session`, { headers: { cookie } });
    expect(session.status).toBe(200);
    expect(await session.json()).toMatchObject({
      user: { email: 'admin@demo.example', role: 'admin' },
      organization: { id: (me.body as { id: string }).id },
    });
    expect(await first.stop()).toBe(0);
    expect(first.output()).toContain('shut down cleanly');

    const second = await startServer({ DATA_DIR: dataDir });
    expect(second.output()).not.toContain('API key');
    expect(second.output()).not.toContain('sign-in');
    expect(second.output()).not.toContain('sil_');
    expect((await get(`${second.baseUrl}/v1/me`, key)).status).toBe(200);
    expect(await second.stop()).toBe(0);

    const migrate = runCli(['migrate'], { DATA_DIR: dataDir });
    expect(migrate.status).toBe(0);
    expect(migrate.stdout).toContain('up to date');
  });

  it('says so when the port is taken, makes nothing, and shows the demo key at the next start', async () => {
    const dataDir = tempDir('crm-test-');
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = String((holder.address() as { port: number }).port);
    try {
      for (const args of [['src/main.ts'], ['src/cli/main.ts', 'serve']]) {
        const result = spawnSync(process.execPath, args, {
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: dataDir, PORT: taken },
          encoding: 'utf8',
          timeout: 60_000,
        });
        expect(result.status, result.stderr).toBe(1);
        expect(result.stderr).toContain(`Port 127.0.0.1:${taken} is already in use`);
        expect(result.stderr).not.toContain('    at ');
        expect(result.stdout).not.toContain('API key');
      }
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
    // Nothing was made on the way: the first start that listens makes the demo and shows its key, once.
    const server = await startServer({ DATA_DIR: dataDir });
    await waitUntil(() => server.output().includes('API key (shown only this once): oak_'), {
      message: 'the demo key in the output',
    });
    expect(await server.stop()).toBe(0);
  });

  it('makes no demo organization when ADMIN_TOKEN is set', async () => {
    const server = await startServer({ DATA_DIR: tempDir('crm-test-'), ADMIN_TOKEN: 'secret' });
    expect(server.output()).not.toContain('API key');
    expect(await server.stop()).toBe(0);
  });

  it('finishes an in-flight request on SIGTERM before exiting', async () => {
    const server = await startServer({ DATA_DIR: tempDir('crm-test-'), ADMIN_TOKEN: 'secret' });
    const { hostname, port } = new URL(server.baseUrl);
    const body = JSON.stringify({ name: 'Drained' });
    const socket = connect({ host: hostname, port: Number(port) });
    await new Promise((resolve) => socket.once('connect', resolve));
    let response = '';
    socket.on('data', (chunk) => {
      response += chunk.toString();
    });
    socket.write(
      `POST /admin/v1/organizations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
    );
    // The server has the request (its headers, not yet its whole body) when it logs it.
    await waitUntil(() => server.output().includes('"url":"/admin/v1/organizations"'), { message: 'the request' });
    server.child.kill('SIGTERM');
    await waitUntil(() => server.output().includes('shutting down: draining'), { message: 'the shutdown' });
    expect(server.child.exitCode).toBeNull(); // still draining: the request is not finished
    socket.write(body.slice(5));
    await new Promise((resolve) => socket.once('close', resolve));
    expect(response).toMatch(/^HTTP\/1\.1 201/);
    expect(response).toContain('"name":"Drained"');
    expect(await server.exited).toBe(0);
    expect(server.output()).toContain('shut down cleanly');
  });

  it('exits with a clear message on bad configuration', async () => {
    const result = runCli(['serve'], { DATA_DIR: tempDir('crm-test-'), MESSAGING_PLATFORM: 'carrier-pigeon' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('MESSAGING_PLATFORM must be "sandbox" or "cloud"');
  });
});

describe.skipIf(onPGlite)('on a PostgreSQL server', { timeout: 120_000 }, () => {
  it('runs the same migrations (crm migrate) and the operator CLI', async () => {
    const database = await createPostgresDatabase();
    try {
      const env = { DATABASE_URL: database.url };
      const migrate = runCli(['migrate'], env);
      expect(migrate.status, migrate.stderr).toBe(0);
      expect(migrate.stdout).toContain('applied: 0001-foundation, 0002-contacts');
      expect(runCli(['migrate'], env).stdout).toContain('up to date');
      const org = runCli(['org', 'create', '--name', 'CLI Corp', '--plan', 'enterprise'], env);
      expect(org.status, org.stderr).toBe(0);
      const orgId = JSON.parse(org.stdout).id as string;
      const key = runCli(['key', 'create', '--org', orgId, '--name', 'cli'], env);
      expect(key.status, key.stderr).toBe(0);
      const apiKey = JSON.parse(key.stdout).key as string;
      expect(apiKey).toMatch(/^oak_/);
      const account = runCli(['account', 'create', '--org', orgId, '--phone', '+15550007777', '--balance', '5'], env);
      expect(account.status, account.stderr).toBe(0);
      expect(JSON.parse(account.stdout)).toMatchObject({ balance: 5, numbers: [{ phone: '+15550007777' }] });
      const invalid = runCli(['org', 'create', '--name', 'x', '--plan', 'gold'], env);
      expect(invalid.status).toBe(2);
      expect(invalid.stderr).toContain('plan');

      const server = await startServer({ ...env, ADMIN_TOKEN: 'secret' }, ['src/cli/main.ts', 'serve', '--no-worker']);
      try {
        const me = await get(`${server.baseUrl}/v1/me`, apiKey);
        expect(me.status).toBe(200);
        expect(me.body).toMatchObject({ id: orgId, plan: 'enterprise' });
        expect((await get(`${server.baseUrl}/healthz`)).body).toEqual({ status: 'ok', database: 'postgres' });
        const revoke = runCli(['key', 'revoke', '--org', orgId, JSON.parse(key.stdout).id], env);
        expect(revoke.status, revoke.stderr).toBe(0);
        expect((await get(`${server.baseUrl}/v1/me`, apiKey)).status).toBe(401);
      } finally {
        expect(await server.stop()).toBe(0);
      }
    } finally {
      await database.drop();
    }
  });

  it.skipIf(!process.env.TEST_REDIS_URL)(
    'shares one rate budget between two server processes on one Redis: 40 requests in a window, exactly 20 pass',
    async () => {
      const database = await createPostgresDatabase();
      const env = {
        DATABASE_URL: database.url,
        REDIS_URL: process.env.TEST_REDIS_URL!,
        ADMIN_TOKEN: 'secret',
      };
      const servers = await Promise.all([startServer(env), startServer(env)]);
      try {
        const admin = (path: string, body: unknown) =>
          fetch(`${servers[0]!.baseUrl}/admin/v1${path}`, {
            method: 'POST',
            headers: { authorization: 'Bearer secret', 'content-type': 'application/json' },
            body: JSON.stringify(body),
          }).then((response) => response.json() as Promise<any>);
        // A window is one wall-clock second; a burst that straddles two seconds measures two budgets, so such a
        // burst is repeated with a fresh organization.
        for (let attempt = 0; attempt < 5; attempt++) {
          const org = await admin('/organizations', { name: `Shared ${attempt}`, plan: 'scale' });
          const { key } = await admin(`/organizations/${org.id}/api-keys`, {});
          const wait = 1000 - (Date.now() % 1000) + 20;
          await new Promise((resolve) => setTimeout(resolve, wait));
          const responses = await Promise.all(
            Array.from({ length: 40 }, (_, index) => get(`${servers[index % 2]!.baseUrl}/v1/me`, key)),
          );
          const resets = new Set(responses.map((response) => response.headers.get('x-ratelimit-reset')));
          if (resets.size !== 1) continue;
          expect(responses.filter((response) => response.status === 200)).toHaveLength(20);
          expect(responses.filter((response) => response.status === 429)).toHaveLength(20);
          const perServer = [0, 1].map(
            (server) => responses.filter((response, index) => index % 2 === server && response.status === 200).length,
          );
          expect(perServer[0]! + perServer[1]!).toBe(20);
          return;
        }
        throw new Error('no burst fitted in one one-second window in 5 attempts');
      } finally {
        await Promise.all(servers.map((server) => server.stop()));
        await database.drop();
      }
    },
  );
});
