// `npm run bench:pglite`: reads and the contact list on the embedded database (PGlite, the default of `npm start`),
// this checkout's `crm serve` beside another checkout's (BENCH_COMPARE_ROOT, e.g. a worktree of an older commit) in
// alternating rounds, each on a fresh data directory of its own, loaded through real HTTP (autocannon, 10
// connections). No bare baseline exists for PGlite (it is one process's database); the comparable figures are the
// same rows of two checkouts under the same weather: req/s, CPU per request from /proc, peak RSS. Seeded through the
// admin API and `POST /v1/contacts/batch-upsert` (PGlite takes no second process). Not part of `npm test`.
//
//   BENCH_COMPARE_ROOT  another checkout's `crm serve` in the same rounds (its own entry: dist/ when built, else src/)
//   BENCH_ORGS          organizations (default 200; each has one key and BENCH_CONTACTS contacts)
//   BENCH_CONTACTS      contacts per organization (default 100)
//   BENCH_DURATION      seconds per server, row and round (default 5)
//   BENCH_ROUNDS        alternating rounds (default 3)
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { combine, load, type Measured, type Started, start, stop, type Target } from './read-load.ts';

const root = resolve(import.meta.dirname, '..');
const compareRoot = process.env.BENCH_COMPARE_ROOT;
const orgCount = Number(process.env.BENCH_ORGS ?? 200);
const contactsPerOrg = Number(process.env.BENCH_CONTACTS ?? 100);
const duration = Number(process.env.BENCH_DURATION ?? 5);
const roundCount = Number(process.env.BENCH_ROUNDS ?? 3);
const ADMIN = 'bench-admin';
const log = (line: string) => process.stdout.write(`${line}\n`);

/** What `bin/crm` runs in a checkout: its compiled CLI when built, else the source. */
const entryOf = (cwd: string) =>
  existsSync(join(cwd, 'dist/src/cli/main.js')) ? 'dist/src/cli/main.js' : 'src/cli/main.ts';

async function flagsOf(cwd: string): Promise<readonly string[]> {
  const own = join(cwd, 'bin', 'node-flags.js');
  if (!existsSync(own)) return ['--max-semi-space-size=2'];
  return ((await import(pathToFileURL(own).href)) as { SERVER_NODE_FLAGS: readonly string[] }).SERVER_NODE_FLAGS;
}

interface Server {
  name: string;
  started: Started;
  dataDir: string;
  targets: Target[];
}

async function call<T>(base: string, method: string, path: string, auth: string, body?: unknown): Promise<T> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${auth}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

async function startServer(name: string, cwd: string): Promise<Server> {
  const dataDir = mkdtempSync(join(tmpdir(), 'crm-bench-pglite-'));
  const args = [...(await flagsOf(cwd)), entryOf(cwd), 'serve'];
  const env = { DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'warn' };
  const started = await start(args, env, '/healthz', cwd);
  const targets: Target[] = [];
  for (let org = 0; org < orgCount; org++) {
    const created = await call<{ id: string }>(started.base, 'POST', '/admin/v1/organizations', ADMIN, {
      name: `Bench ${org}`,
      plan: 'scale',
    });
    const key = await call<{ key: string }>(
      started.base,
      'POST',
      `/admin/v1/organizations/${created.id}/api-keys`,
      ADMIN,
      {
        name: 'bench',
      },
    );
    let contactId = '';
    for (let from = 0; from < contactsPerOrg; from += 100) {
      const items = Array.from({ length: Math.min(100, contactsPerOrg - from) }, (_, index) => ({
        email: `c${from + index}@org${org}.example.com`,
        first_name: `Name${from + index}`,
        city: ['Lima', 'Quito', 'Bogotá'][(from + index) % 3],
      }));
      const batch = await call<{ items: { contact: { id: string } }[] }>(
        started.base,
        'POST',
        '/v1/contacts/batch-upsert',
        key.key,
        {
          match_on: 'email',
          items,
        },
      );
      contactId ||= batch.items[0]?.contact.id ?? '';
    }
    targets.push({ orgId: created.id, key: key.key, contactId });
  }
  return { name, started, dataDir, targets };
}

const ROWS: { row: string; path: (target: Target) => string }[] = [
  { row: 'GET /v1/contacts/{id}', path: (target) => `/v1/contacts/${target.contactId}` },
  { row: 'GET /v1/contacts?limit=50', path: () => '/v1/contacts?limit=50' },
];

async function main(): Promise<void> {
  const servers: Server[] = [];
  try {
    log(`seeding ${orgCount} organizations × ${contactsPerOrg} contacts on PGlite, each server its own data directory`);
    servers.push(await startServer(`this checkout (${entryOf(root)})`, root));
    if (compareRoot) servers.push(await startServer(`${compareRoot} (${entryOf(compareRoot)})`, compareRoot));
    for (const server of servers)
      for (const { row, path } of ROWS) await load(row, server.started, server.targets, -2, path);
    for (const { row, path } of ROWS) {
      const rounds: Measured[][] = servers.map(() => []);
      for (let round = 0; round < roundCount; round++) {
        for (let turn = 0; turn < servers.length; turn++) {
          const index = (round + turn) % servers.length;
          const server = servers[index] as Server;
          (rounds[index] as Measured[]).push(await load(server.name, server.started, server.targets, duration, path));
        }
      }
      log(`\n${row}: ${roundCount} alternating rounds of ${duration} s`);
      log('| server | req/s | p50 | p99 | CPU / request | non-2xx | peak RSS |');
      log('|---|---:|---:|---:|---:|---:|---:|');
      const combined = rounds.map((measured) => combine(measured));
      for (const m of combined)
        log(
          `| ${m.name} | ${m.rps.toFixed(0)} | ${m.p50} ms | ${m.p99} ms | ${m.cpuMsPerRequest.toFixed(2)} ms | ${m.non2xx} | ${m.peakRssMb.toFixed(0)} MB |`,
        );
      if (combined.length === 2) {
        const [mine, other] = combined as [Measured, Measured];
        log(
          `this checkout / compared: req/s ${(mine.rps / other.rps).toFixed(2)}×, CPU a request ${(mine.cpuMsPerRequest / other.cpuMsPerRequest).toFixed(2)}×`,
        );
      }
    }
  } finally {
    for (const server of servers) {
      await stop(server.started.child);
      rmSync(server.dataDir, { recursive: true, force: true });
    }
  }
}

await main();
