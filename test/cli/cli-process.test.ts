// The CLI as a real process: operator commands refuse an embedded database that a running server holds (and write
// nothing), a lock left by a killed server is taken over, exactly one of many contenders wins a stale lock, the
// list commands, the `crm` bin shim, and the public API commands against a live server with CRM_API_KEY.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase } from '../helpers/database.ts';
import { freePort, runCli, startServer } from '../helpers/process.ts';

const onPGlite = process.env.TEST_DB !== 'postgres';
const root = fileURLToPath(new URL('../..', import.meta.url));
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'crm-cli-test-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const json = (stdout: string) => JSON.parse(stdout);

describe.skipIf(!onPGlite)('on the embedded database', { timeout: 180_000 }, () => {
  it('refuses to write while a server holds the data dir, writes nothing, and works again once it stops', async () => {
    const dataDir = tempDir();
    const env = { DATA_DIR: dataDir };
    const org = runCli(['org', 'create', '--name', 'Before'], env);
    expect(org.status, org.stderr).toBe(0);
    const orgId = json(org.stdout).id as string;
    expect(existsSync(join(dataDir, 'crm.lock'))).toBe(false);

    const server = await startServer({ ...env, ADMIN_TOKEN: 'secret' });
    let serverPid: number | undefined;
    try {
      serverPid = server.child.pid;
      expect(json(readFileSync(join(dataDir, 'crm.lock'), 'utf8')).pid).toBe(serverPid);
      for (const args of [
        ['key', 'create', '--org', orgId],
        ['org', 'create', '--name', 'During'],
      ]) {
        const refused = runCli(args, env);
        expect(refused.status, args.join(' ')).toBe(1);
        expect(refused.stdout).toBe('');
        expect(refused.stderr).toContain(`is in use by another process (pid ${serverPid}`);
        expect(refused.stderr).toContain('/admin/v1');
      }
      // A second server on the same directory refuses to start, whichever way it is started.
      for (const args of [['src/main.ts'], ['src/cli/main.ts', 'serve']]) {
        const second = spawnSync(process.execPath, args, {
          cwd: root,
          env: { PATH: process.env.PATH ?? '', ...env, PORT: '0', ADMIN_TOKEN: 'secret' },
          encoding: 'utf8',
          timeout: 60_000,
        });
        expect(second.status, args.join(' ')).toBe(1);
        expect(second.stderr).toContain(`is in use by another process (pid ${serverPid}`);
      }
      // The server is untouched: it still answers, and its data is what it was.
      const response = await fetch(`${server.baseUrl}/admin/v1/organizations/${orgId}`, {
        headers: { authorization: 'Bearer secret' },
      });
      expect(response.status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    expect(existsSync(join(dataDir, 'crm.lock'))).toBe(false);

    const orgs = runCli(['org', 'list'], env);
    expect(orgs.status, orgs.stderr).toBe(0);
    expect(json(orgs.stdout).map((row: { name: string }) => row.name)).toEqual(['Before']);
    const keys = runCli(['key', 'list', '--org', orgId], env);
    expect(keys.status, keys.stderr).toBe(0);
    expect(json(keys.stdout)).toEqual([]);
  });

  it('adds a console user with a one-time sign-in link that the server then accepts (crm user add)', async () => {
    const dataDir = tempDir();
    const port = String(await freePort());
    const env = { DATA_DIR: dataDir, PORT: port };
    const orgId = json(runCli(['org', 'create', '--name', 'People'], env).stdout).id as string;
    const added = runCli(['user', 'add', '--org', orgId, '--email', 'ana@example.com', '--role', 'agent'], env);
    expect(added.status, added.stderr).toBe(0);
    const user = json(added.stdout);
    expect(user).toMatchObject({ email: 'ana@example.com', role: 'agent', last_sign_in_at: null });
    expect(user.sign_in_url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/app/set-password#token=sil_`));

    const twice = runCli(['user', 'add', '--org', orgId, '--email', 'ana@example.com', '--role', 'admin'], env);
    expect(twice.status).toBe(1);
    expect(twice.stderr).toContain('duplicate_user');
    const badRole = runCli(['user', 'add', '--org', orgId, '--email', 'bo@example.com', '--role', 'owner'], env);
    expect(badRole.status).toBe(2);
    expect(badRole.stderr).toContain('invalid input');
    const noEmail = runCli(['user', 'add', '--org', orgId, '--role', 'admin'], env);
    expect(noEmail.status).toBe(2);
    expect(noEmail.stderr).toContain('--email is required');
    const noOrg = runCli(['user', 'add', '--org', 'org_missing', '--email', 'cy@example.com', '--role', 'admin'], env);
    expect(noOrg.status).toBe(1);
    expect(noOrg.stderr).toContain('not_found');

    const server = await startServer({ ...env, ADMIN_TOKEN: 'secret' });
    try {
      const token = new URL(user.sign_in_url).hash.replace('#token=', '');
      const accepted = await fetch(`${server.baseUrl}/app/api/sign-in-links/accept`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: server.baseUrl },
        body: JSON.stringify({ token, password: 'ana chooses this' }),
      });
      expect(accepted.status, await accepted.clone().text()).toBe(201);
      expect(await accepted.json()).toMatchObject({
        user: { email: 'ana@example.com', role: 'agent' },
        organization: { id: orgId },
      });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it('finds the data directory like the server, names it, and never creates a database to read from (D291)', () => {
    // bin/crm run from another directory: the project's data directory, as `npm start` uses, not ./data there.
    const elsewhere = tempDir();
    const projectData = join(root, 'data');
    const hadDatabase = existsSync(join(projectData, 'PG_VERSION'));
    const fromElsewhere = spawnSync(join(root, 'bin/crm'), ['org', 'list'], {
      cwd: elsewhere,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(fromElsewhere.stderr).toContain(`using the embedded database in ${projectData} (the default`);
    expect(existsSync(join(elsewhere, 'data'))).toBe(false);
    if (!hadDatabase) {
      expect(fromElsewhere.status).toBe(1);
      expect(fromElsewhere.stderr).toContain(`there is no database in ${projectData}`);
      expect(existsSync(join(projectData, 'PG_VERSION'))).toBe(false);
    }

    // The commands that read refuse a directory without a database, and create nothing there.
    const fresh = join(tempDir(), 'fresh');
    for (const args of [
      ['org', 'list'],
      ['org', 'show', 'org_x'],
      ['key', 'list', '--org', 'org_x'],
      ['backup', join(elsewhere, 'b.tar.gz')],
    ]) {
      const refused = runCli(args, { DATA_DIR: fresh });
      expect(refused.status, args.join(' ')).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain(`using the embedded database in ${fresh} (DATA_DIR)`);
      expect(refused.stderr).toContain(`there is no database in ${fresh} (DATA_DIR)`);
      expect(existsSync(fresh), args.join(' ')).toBe(false);
    }
    // A mistake in how a command is called is found before any database is opened (or created).
    const mistaken = runCli(['org', 'create', '--name', 'x', '--plan', 'gold'], { DATA_DIR: fresh });
    expect(mistaken.status).toBe(2);
    expect(mistaken.stderr).toContain('plan');
    expect(existsSync(fresh)).toBe(false);
    // A command that writes makes it; then the reads work.
    expect(runCli(['org', 'create', '--name', 'First'], { DATA_DIR: fresh }).status).toBe(0);
    const listed = runCli(['org', 'list'], { DATA_DIR: fresh });
    expect(listed.status, listed.stderr).toBe(0);
    expect(json(listed.stdout).map((row: { name: string }) => row.name)).toEqual(['First']);
  });

  it('takes over the lock of a server killed with SIGKILL', async () => {
    const dataDir = tempDir();
    const server = await startServer({ DATA_DIR: dataDir, ADMIN_TOKEN: 'secret' });
    const pid = server.child.pid;
    expect(await server.stop('SIGKILL')).toBeNull();
    expect(json(readFileSync(join(dataDir, 'crm.lock'), 'utf8')).pid).toBe(pid);
    const created = runCli(['org', 'create', '--name', 'After the crash'], { DATA_DIR: dataDir });
    expect(created.status, created.stderr).toBe(0);
    expect(existsSync(join(dataDir, 'crm.lock'))).toBe(false);
  });

  it('gives a stale lock to exactly one of eight processes racing for it', async () => {
    const dataDir = tempDir();
    // A pid that is surely dead: a process that has exited.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(dataDir, 'crm.lock'), JSON.stringify({ pid: Number(dead.stdout), command: 'dead' }));
    const lockModule = join(root, 'src/db/data-dir-lock.ts');
    const script = `
      import { lockDataDir } from ${JSON.stringify(lockModule)};
      const start = Number(process.argv[1]);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, start - Date.now())));
      try {
        const lock = await lockDataDir(${JSON.stringify(dataDir)});
        process.stdout.write('won');
        await new Promise((resolve) => setTimeout(resolve, 1500));
        lock.release();
      } catch (error) {
        process.stdout.write(error.name === 'Error' && /in use/.test(error.message) ? 'refused' : String(error));
      }`;
    // All start together once loaded (loading takes a while on a busy machine).
    const start = String(Date.now() + 4000);
    const outcomes = await Promise.all(
      Array.from(
        { length: 8 },
        () =>
          new Promise<string>((resolve) => {
            const child = spawn(process.execPath, ['--input-type=module', '-e', script, start], { cwd: root });
            let output = '';
            child.stdout.on('data', (chunk) => {
              output += chunk;
            });
            let errors = '';
            child.stderr.on('data', (chunk) => {
              errors += chunk;
            });
            child.on('exit', () => resolve(output || errors));
          }),
      ),
    );
    expect(
      outcomes.filter((outcome) => outcome === 'won'),
      outcomes.join('\n'),
    ).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'refused')).toHaveLength(7);
    expect(existsSync(join(dataDir, 'crm.lock'))).toBe(false);
  });

  it('speaks the public API with CRM_API_KEY beside a running server (crm me, crm contacts)', async () => {
    const dataDir = tempDir();
    const server = await startServer({ DATA_DIR: dataDir, ADMIN_TOKEN: 'secret' });
    try {
      const admin = async (path: string, body: unknown) =>
        (
          await fetch(`${server.baseUrl}/admin/v1${path}`, {
            method: 'POST',
            headers: { authorization: 'Bearer secret', 'content-type': 'application/json' },
            body: JSON.stringify(body),
          })
        ).json() as Promise<any>;
      const org = await admin('/organizations', { name: 'API Corp' });
      const { key } = await admin(`/organizations/${org.id}/api-keys`, {});
      const env = { CRM_API_KEY: key, CRM_BASE_URL: server.baseUrl };
      const me = runCli(['me'], env);
      expect(me.status, me.stderr).toBe(0);
      expect(json(me.stdout)).toMatchObject({ id: org.id, name: 'API Corp' });

      const created = await fetch(`${server.baseUrl}/v1/contacts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ first_name: 'Lina' }),
      }).then((response) => response.json() as Promise<any>);
      const got = runCli(['contacts', 'get', created.id], env);
      expect(got.status, got.stderr).toBe(0);
      expect(json(got.stdout)).toMatchObject({ id: created.id, first_name: 'Lina' });
      const list = runCli(['contacts', 'list', '--limit', '5'], env);
      expect(json(list.stdout)).toMatchObject({ items: [{ id: created.id }], next_cursor: null });
      const all = runCli(['contacts', 'list', '--all', '--limit', '1'], env);
      expect(
        all.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).id),
      ).toEqual([created.id]);

      const missing = runCli(['contacts', 'get', 'ct_missing'], env);
      expect(missing.status).toBe(1);
      expect(missing.stderr).toContain('"status":404');
      expect(missing.stderr).toContain('"code":"not_found"');
      const badKey = runCli(['me'], { ...env, CRM_API_KEY: 'oak_wrong' });
      expect(badKey.status).toBe(1);
      expect(badKey.stderr).toContain('invalid_api_key');
    } finally {
      expect(await server.stop()).toBe(0);
    }
    const noKey = runCli(['me'], {});
    expect(noKey.status).toBe(2);
    expect(noKey.stderr).toContain('CRM_API_KEY is required');
    const unreachable = runCli(['me'], { CRM_API_KEY: 'oak_x', CRM_BASE_URL: 'http://127.0.0.1:9' });
    expect(unreachable.status).toBe(1);
    expect(unreachable.stderr).toContain('cannot reach the API');
  });

  it('runs through the bin shim on the pinned Node and on an older one', () => {
    const viaShim = spawnSync(process.execPath, [join(root, 'bin/crm.js'), '--help'], { encoding: 'utf8' });
    expect(viaShim.status, viaShim.stderr).toBe(0);
    expect(viaShim.stdout).toContain('Usage: crm');
    for (const dir of (process.env.PATH ?? '').split(delimiter)) {
      const node = join(dir, 'node');
      const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '';
      if (!/^v(20|21|22)\./.test(version)) continue;
      // An older Node hands the CLI to the pinned one, with its arguments and exit code.
      const older = spawnSync(node, [join(root, 'bin/crm.js'), 'org', 'frobnicate'], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, DATA_DIR: tempDir() },
      });
      expect(older.status, older.stderr).toBe(2);
      expect(older.stderr).toContain('unknown command: org frobnicate');
      return;
    }
  });
});

describe.skipIf(onPGlite)('on a PostgreSQL server', { timeout: 120_000 }, () => {
  it('lists organizations, keys and accounts (crm org list, crm key list, crm account list)', async () => {
    const database = await createPostgresDatabase();
    try {
      const env = { DATABASE_URL: database.url };
      const orgId = json(runCli(['org', 'create', '--name', 'Listed'], env).stdout).id;
      const key = json(runCli(['key', 'create', '--org', orgId, '--name', 'one'], env).stdout);
      runCli(['key', 'revoke', '--org', orgId, key.id], env);
      runCli(['key', 'create', '--org', orgId, '--name', 'two'], env);
      expect(json(runCli(['org', 'list'], env).stdout)).toMatchObject([{ id: orgId, name: 'Listed' }]);
      const keys = json(runCli(['key', 'list', '--org', orgId], env).stdout);
      expect(keys.map((row: { name: string }) => row.name)).toEqual(['one', 'two']);
      expect(keys[0].revoked_at).not.toBeNull();
      expect(keys[1].revoked_at).toBeNull();
      expect(Object.keys(keys[0]).sort()).toEqual([
        'created_at',
        'expires_at',
        'id',
        'last_used_at',
        'name',
        'prefix',
        'revoked_at',
        'scopes',
      ]);
      expect(JSON.stringify(keys)).not.toContain(key.key);
      // D223: an organization's messaging accounts, as the operator API lists them.
      const account = json(
        runCli(['account', 'create', '--org', orgId, '--balance', '5', '--limit', '30'], env).stdout,
      );
      expect(json(runCli(['account', 'list', '--org', orgId], env).stdout)).toEqual([account]);
      // D227: a top-up from the terminal.
      const topped = json(runCli(['account', 'update', account.id, '--balance', '50', '--limit', '40'], env).stdout);
      expect(topped).toMatchObject({ id: account.id, balance: 50, messaging_limit_24h: 40 });
      // decisions §18: scopes and expiry, with the operator API's checks.
      const scoped = runCli(
        [
          'key',
          'create',
          '--org',
          orgId,
          '--scopes',
          'contacts:read,broadcasts:write',
          '--expires-at',
          '2099-01-01T00:00:00Z',
        ],
        env,
      );
      expect(scoped.status, scoped.stderr).toBe(0);
      expect(json(scoped.stdout)).toMatchObject({
        scopes: ['contacts:read', 'broadcasts:write'],
        expires_at: '2099-01-01T00:00:00.000Z',
      });
      const badScope = runCli(['key', 'create', '--org', orgId, '--scopes', 'contacts:delete'], env);
      expect(badScope.status).toBe(2);
      expect(badScope.stderr).toContain('invalid input');
      const starBeside = runCli(['key', 'create', '--org', orgId, '--scopes', '*,contacts:read'], env);
      expect(starBeside.status).toBe(1);
      expect(starBeside.stderr).toContain('scopes');
      const past = runCli(['key', 'create', '--org', orgId, '--expires-at', '2020-01-01T00:00:00Z'], env);
      expect(past.status).toBe(1);
      expect(past.stderr).toContain('expires_at');
      expect(json(runCli(['key', 'list', '--org', orgId], env).stdout)).toHaveLength(3);
      const unknown = runCli(['key', 'list', '--org', 'org_missing'], env);
      expect(unknown.status).toBe(1);
      expect(unknown.stderr).toContain('not_found');
    } finally {
      await database.drop();
    }
  });
});
