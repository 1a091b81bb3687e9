// `npm run bench:reads`: GET /v1/contacts/{id} with auth and rate limit, on PostgreSQL + Redis, through real HTTP
// (autocannon, 10 connections, in this process; the servers are child processes), against a bare Fastify server
// doing one primary-key select on pg, measured in the same run. Prints req/s, p50/p99, the ratio and the API's RSS,
// and records the headline rows for `npm run bench` (bench/summary.ts).
//
// The rate limit stays on: the load is spread over BENCH_ORGS organizations (one key and one contact each), so
// that no organization passes its 20 requests per second; the output counts any 429.
//
//   BENCH_DATABASE_URL  default postgres://postgres@127.0.0.1:5432/crm_bench_reads (recreated every run)
//   BENCH_REDIS_URL     default redis://127.0.0.1:6379
//   BENCH_ORGS          default 500
//   BENCH_DURATION      seconds per server per round, default 8 (BENCH_QUICK=1: 3)
//   BENCH_ROUNDS        alternating rounds, default 5 (BENCH_QUICK=1: 3)
//   BENCH_API_NODE_FLAGS  extra node flags for the API process (e.g. --max-semi-space-size=4)
//   BENCH_API_ROOT      run the API of another checkout (e.g. an export of main, for a before/after)
//   BENCH_COMPARE_ROOT  also run another checkout's API (e.g. an export of main) in the same alternating rounds,
//                       reported as its own row beside its own ratio: a before/after under the same load
//   BENCH_COMPARE_NODE_FLAGS  extra node flags of that second API (with BENCH_COMPARE_ROOT unset: this checkout)
//   BENCH_API_ENTRY     the file the API runs, relative to its checkout: by default what bin/crm runs there (in this
//                       checkout the compiled dist/src/cli/main.js while current, decisions D187; another checkout's
//                       src/cli/main.ts); e.g. src/cli/main.ts for the type-stripped sources
//   BENCH_COMPARE_ENTRY the same for the second API (with BENCH_COMPARE_ROOT unset: this checkout), e.g.
//                       BENCH_COMPARE_ENTRY=src/cli/main.ts: compiled against type-stripped in the same rounds
//   BENCH_CPU_PROF=1    run the API with `node --cpu-prof` (profile written to bench/profiles/)
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { entry } from '../bin/aot.js';
import { SERVER_NODE_FLAGS } from '../bin/node-flags.js';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { systemClock } from '../src/lib/clock.ts';
import { createContactsService } from '../src/modules/contacts/contacts.service.ts';
import { createOperatorService } from '../src/modules/operator/operator.service.ts';
import { createPropertiesService } from '../src/modules/properties/properties.service.ts';
import { freshDatabase } from './bench-database.ts';
import {
  CONNECTIONS,
  combine,
  load,
  type Measured,
  median,
  type Started,
  start,
  stop,
  type Target,
} from './read-load.ts';
import { recordSummary } from './summary.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
// Another checkout's API against the same baseline (for a before/after), run as that checkout ran it.
const apiRoot = process.env.BENCH_API_ROOT ?? root;
const compareFlags = (process.env.BENCH_COMPARE_NODE_FLAGS ?? '').split(' ').filter(Boolean);
const apiEntry = process.env.BENCH_API_ENTRY || undefined;
const compareEntry = process.env.BENCH_COMPARE_ENTRY || undefined;
const compareRoot =
  process.env.BENCH_COMPARE_ROOT ?? (compareFlags.length > 0 || compareEntry !== undefined ? root : undefined);
const url = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/crm_bench_reads');
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const quick = process.env.BENCH_QUICK === '1';
const orgCount = Number(process.env.BENCH_ORGS ?? 500);
const duration = Number(process.env.BENCH_DURATION ?? (quick ? 3 : 8));
const roundCount = Number(process.env.BENCH_ROUNDS ?? (quick ? 3 : 5));
const log = (line: string) => process.stderr.write(`${line}\n`);

/** Organizations with one key and one contact carrying three custom property values, through the services. */
async function seed(): Promise<Target[]> {
  const database = await openDatabase({ databaseUrl: url.toString(), poolSize: 10 });
  try {
    await migrateToLatest(database.db);
    const operator = createOperatorService({ db: database.db, clock: systemClock, platform: 'sandbox' });
    const properties = createPropertiesService({ db: database.db, clock: systemClock });
    const contacts = createContactsService({ db: database.db, clock: systemClock });
    const targets: Target[] = [];
    for (let index = 0; index < orgCount; index++) {
      const org = await operator.createOrganization({ name: `Reads ${index}`, plan: 'scale' });
      const { key } = await operator.createApiKey(org.id, { name: 'bench' });
      await properties.create(org.id, { key: 'tier', label: 'Tier', kind: 'TEXT' } as never);
      await properties.create(org.id, { key: 'score', label: 'Score', kind: 'NUMBER' } as never);
      await properties.create(org.id, { key: 'vip', label: 'VIP', kind: 'BOOLEAN' } as never);
      const contact = await contacts.create(org.id, {
        first_name: 'Ana',
        last_name: `Reader ${index}`,
        email: `ana${index}@example.com`,
        phone: `+1555${String(1_000_000 + index).slice(-7)}`,
        properties: {
          tier: { kind: 'TEXT', value_text: 'gold' },
          score: { kind: 'NUMBER', value_number: 42.5 },
          vip: { kind: 'BOOLEAN', value_bool: true },
        },
      } as never);
      targets.push({ orgId: org.id, key, contactId: contact.id });
    }
    return targets;
  } finally {
    await database.close();
  }
}

/** What bin/crm runs in checkout `cwd`: this checkout's compiled CLI while current (bin/aot.js), else the source. */
function entryOf(cwd: string, given: string | undefined): string {
  return given ?? (cwd === root ? relative(root, entry('src/cli/main.ts')) : 'src/cli/main.ts');
}

/** The node flags `bin/crm` and `npm start` give the server in checkout `cwd` (bin/node-flags.js, decisions D194). */
async function serverFlags(cwd: string): Promise<readonly string[]> {
  if (cwd === root) return SERVER_NODE_FLAGS;
  const own = join(cwd, 'bin', 'node-flags.js');
  // Before bin/node-flags.js, bin/crm and npm start gave it a small young generation only (decisions D28).
  if (!existsSync(own)) return ['--max-semi-space-size=2'];
  return ((await import(pathToFileURL(own).href)) as { SERVER_NODE_FLAGS: readonly string[] }).SERVER_NODE_FLAGS;
}

/** The API (`crm serve --no-worker`) of checkout `cwd` with the flags `bin/crm` and `npm start` use. */
async function startApi(cwd: string, extraFlags: string[], file: string): Promise<Started> {
  const args = [
    ...(await serverFlags(cwd)),
    ...(process.env.BENCH_CPU_PROF === '1' ? ['--cpu-prof', '--cpu-prof-dir', 'bench/profiles'] : []),
    ...extraFlags,
    file,
    'serve',
    '--no-worker',
  ];
  const env = { DATABASE_URL: url.toString(), REDIS_URL: redisUrl, ADMIN_TOKEN: 'bench-admin', LOG_LEVEL: 'warn' };
  return start(args, env, '/healthz', cwd);
}

const BARE = 'bare Fastify + one pg select';
/** The read's target ratio to the bare server (docs/benchmarks.md; the bench said 0.7 until 11-27, an older target). */
const READ_TARGET = 0.8;
const API = 'GET /v1/contacts/{id} (auth + rate limit, pg + Redis)';
const COMPARE =
  `the same, API of ${compareRoot ?? ''} ${entryOf(compareRoot ?? root, compareEntry)} ${compareFlags.join(' ')}`.trim();

async function main(): Promise<void> {
  log(`seeding ${orgCount} organizations on ${url.pathname.slice(1)} ...`);
  await freshDatabase(url.pathname.slice(1));
  const targets = await seed();
  const first = targets[0] as Target;
  const servers: { name: string; server: Started; path: (target: Target) => string }[] = [];
  try {
    const bare = await start(
      ['bench/bare-read-server.ts'],
      { DATABASE_URL: url.toString(), BENCH_ORG_ID: first.orgId },
      `/contacts/${first.contactId}`,
      root,
    );
    servers.push({ name: BARE, server: bare, path: (target) => `/contacts/${target.contactId}` });
    const apiPath = (target: Target) => `/v1/contacts/${target.contactId}`;
    const apiFlags = (process.env.BENCH_API_NODE_FLAGS ?? '').split(' ').filter(Boolean);
    servers.push({ name: API, server: await startApi(apiRoot, apiFlags, entryOf(apiRoot, apiEntry)), path: apiPath });
    if (compareRoot)
      servers.push({
        name: COMPARE,
        server: await startApi(compareRoot, compareFlags, entryOf(compareRoot, compareEntry)),
        path: apiPath,
      });
    // Warm each (JIT, pools, and every key into the API's cache: two requests per key).
    for (const { name, server, path } of servers) await load(name, server, targets, -2, path);
    // The machine is shared: measure in alternating rounds (each round starts with the next server), so that every
    // server sees the same weather, and compare each round's figures with the bare server's of the same round.
    const rounds: Measured[][] = [];
    for (let round = 0; round < roundCount; round++) {
      const measured = new Map<string, Measured>();
      for (let turn = 0; turn < servers.length; turn++) {
        const { name, server, path } = servers[(round + turn) % servers.length] as (typeof servers)[number];
        measured.set(name, await load(name, server, targets, duration, path));
      }
      const row = servers.map(({ name }) => measured.get(name) as Measured);
      log(`round ${round + 1}: ${row.map((m) => `${m.name.split(' (')[0]} ${m.rps.toFixed(0)} req/s`).join(', ')}`);
      rounds.push(row);
    }
    const results = servers.map((_, index) => combine(rounds.map((row) => row[index] as Measured)));
    const ratios = servers.map((_, index) =>
      rounds.map((row) => (row[index] as Measured).rps / (row[0] as Measured).rps),
    );
    const baseline = results[0] as Measured;
    const measured = results[1] as Measured;
    // The API's own view of the same requests (from onRequest to the response), against what the client saw.
    const metrics = await (await fetch(`${(servers[1] as (typeof servers)[number]).server.base}/metrics`)).text();
    const series = (name: string) =>
      Number(
        new RegExp(`${name}\\{[^}]*route="/v1/contacts/:contact_id"[^}]*status="200"[^}]*\\} (\\S+)`).exec(
          metrics,
        )?.[1],
      );
    const serverMeanMs =
      (series('http_request_duration_seconds_sum') / series('http_request_duration_seconds_count')) * 1000;
    const line = (m: Measured) =>
      `| ${m.name} | ${m.rps.toFixed(0)} | ${m.p50} ms | ${m.p99} ms | ${m.cpuMsPerRequest.toFixed(2)} ms | ${m.non2xx} | ${m.errors} | ${m.peakRssMb.toFixed(0)} MB |`;
    const ratioOf = (index: number) => median(ratios[index] as number[]);
    const ratioLine = (index: number) =>
      `ratio ${index === 1 ? 'API' : 'compared API'} / bare (median of the rounds ${(ratios[index] as number[]).map((value) => value.toFixed(2)).join(', ')}): ${ratioOf(index).toFixed(2)}x`;
    const ratio = ratioOf(1);
    const rss = measured.peakRssMb;
    const load1 = loadavg()
      .map((value) => value.toFixed(1))
      .join(' ');
    process.stdout.write(
      [
        '',
        `reads: ${CONNECTIONS} connections, ${roundCount} rounds of ${duration} s per server, ${orgCount} organizations round-robin (rate limit on: each organization stays under its 20/s), API LOG_LEVEL=warn, ${apiRoot === root ? `node ${SERVER_NODE_FLAGS.join(' ')} ${entryOf(apiRoot, apiEntry)} (as bin/crm and npm start)` : `the API of ${apiRoot}`}`,
        '',
        '| server | req/s | p50 | p99 | server CPU / request | non-2xx | errors | peak RSS |',
        '|---|---|---|---|---|---|---|---|',
        ...results.map(line),
        '',
        `${ratioLine(1)} (target >= 0.8x)  ${ratio >= READ_TARGET ? 'MET' : 'NOT MET'}`,
        ...(results.length > 2 ? [ratioLine(2)] : []),
        `API mean duration inside the server (warm-up included): ${serverMeanMs.toFixed(1)} ms; the rest of the client's latency is queueing`,
        ...results
          .slice(1)
          .map(
            (m) =>
              `server CPU per request, bare / ${m.name}: ${(baseline.cpuMsPerRequest / m.cpuMsPerRequest).toFixed(2)}x`,
          ),
        `machine load average at the end: ${load1} on ${cpus().length} CPUs`,
        `API RSS under the read load: ${rss.toFixed(0)} MB (target <= 200 MB)  ${rss <= 200 ? 'MET' : 'NOT MET'}`,
        '',
      ].join('\n'),
    );
    const mode = `${quick ? 'quick' : 'full'}: ${CONNECTIONS} connections, ${orgCount} organizations, ${roundCount} × ${duration} s, load ${load1}`;
    const bareFigure = `${BARE}: ${baseline.rps.toFixed(0)} req/s (p50 ${baseline.p50} ms, p99 ${baseline.p99} ms)`;
    recordSummary([
      {
        path: 'GET /v1/contacts/{id}',
        row: `auth + rate limit, pg + Redis (${mode})`,
        baseline: bareFigure,
        value: `${measured.rps.toFixed(0)} req/s`,
        ratio,
        p50Ms: measured.p50,
        p99Ms: measured.p99,
        rssMb: rss,
        target: `>= ${READ_TARGET}x bare`,
        met: ratio >= READ_TARGET,
      },
      {
        path: 'GET /v1/contacts/{id}',
        row: `API RSS under that read load (${mode})`,
        baseline: `${BARE}: ${baseline.peakRssMb.toFixed(0)} MB`,
        value: `${rss.toFixed(0)} MB`,
        ratio: null,
        p50Ms: null,
        p99Ms: null,
        rssMb: rss,
        target: '<= 200 MB RSS',
        met: rss <= 200,
      },
    ]);
    if (measured.non2xx > 0)
      log(`warning: ${measured.non2xx} non-2xx answers from the API (429 would mean a budget was exceeded)`);
  } finally {
    await Promise.all(servers.map(({ server }) => stop(server.child)));
  }
}

await main();
