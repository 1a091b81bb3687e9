// `npm run bench:reads`: GET /v1/contacts/{id} with auth and rate limit, on PostgreSQL + Redis, through real HTTP
// (autocannon, 10 connections, in this process; the servers are child processes), against a bare Fastify server
// doing one primary-key select on pg, measured in the same run. Prints req/s, p50/p99, the ratio and the API's RSS.
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
//   BENCH_CPU_PROF=1    run the API with `node --cpu-prof` (profile written to bench/profiles/)
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { systemClock } from '../src/lib/clock.ts';
import { createContactsService } from '../src/modules/contacts/contacts.service.ts';
import { createOperatorService } from '../src/modules/operator/operator.service.ts';
import { createPropertiesService } from '../src/modules/properties/properties.service.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
// Another checkout's API against the same baseline (for a before/after), run as that checkout ran it.
const apiRoot = process.env.BENCH_API_ROOT ?? root;
const url = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/crm_bench_reads');
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const quick = process.env.BENCH_QUICK === '1';
const orgCount = Number(process.env.BENCH_ORGS ?? 500);
const duration = Number(process.env.BENCH_DURATION ?? (quick ? 3 : 8));
const roundCount = Number(process.env.BENCH_ROUNDS ?? (quick ? 3 : 5));
const CONNECTIONS = 10;
const log = (line: string) => process.stderr.write(`${line}\n`);

async function recreateDatabase(): Promise<void> {
  const name = url.pathname.slice(1);
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsupported database name ${name}`);
  const server = new URL(url);
  server.pathname = '/postgres';
  const client = new pg.Client({ connectionString: server.toString() });
  await client.connect();
  try {
    await client.query(`drop database if exists ${name} with (force)`);
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
}

interface Target {
  orgId: string;
  key: string;
  contactId: string;
}

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
      const { key } = await operator.createApiKey(org.id, 'bench');
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

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function start(
  args: string[],
  env: Record<string, string>,
  probe: string,
  cwd = root,
): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 600; attempt++) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}`);
    try {
      const response = await fetch(`${base}${probe}`);
      await response.arrayBuffer();
      return { child, base };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`${args.join(' ')} did not start`);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Measured {
  name: string;
  /** Server CPU time per answered request: what the server costs, whatever else the shared machine runs. */
  cpuMsPerRequest: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  peakRssMb: number;
}

/** `seconds` of load, or (a negative number) exactly that many requests per target: the warm-up. */
async function load(name: string, base: string, targets: Target[], seconds: number, pid: number): Promise<Measured> {
  let next = 0;
  const cpuBefore = cpuSeconds(pid);
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 250);
  const result = await autocannon({
    url: base,
    connections: CONNECTIONS,
    ...(seconds > 0 ? { duration: seconds } : { amount: -seconds * targets.length }),
    requests: [
      {
        method: 'GET',
        // Round-robin over the organizations: each stays far below its budget of 20 per second.
        setupRequest: (request) => {
          const target = targets[next++ % targets.length] as Target;
          return {
            ...request,
            path: name === 'bare' ? `/contacts/${target.contactId}` : `/v1/contacts/${target.contactId}`,
            headers: { authorization: `Bearer ${target.key}`, 'x-org': target.orgId },
          };
        },
      },
    ],
  });
  clearInterval(sampler);
  return {
    name,
    cpuMsPerRequest: ((cpuSeconds(pid) - cpuBefore) * 1000) / Math.max(1, result.requests.total),
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    peakRssMb: Math.max(peak, rssMb(pid)),
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

/** Rounds of one server: total throughput, median percentiles, CPU per request over all, peak RSS. */
function combine(rounds: Measured[]): Measured {
  const requests = rounds.reduce((sum, m) => sum + m.rps, 0);
  return {
    name: (rounds[0] as Measured).name,
    rps: requests / rounds.length,
    p50: median(rounds.map((m) => m.p50)),
    p99: median(rounds.map((m) => m.p99)),
    cpuMsPerRequest: rounds.reduce((sum, m) => sum + m.cpuMsPerRequest * m.rps, 0) / requests,
    non2xx: rounds.reduce((sum, m) => sum + m.non2xx, 0),
    errors: rounds.reduce((sum, m) => sum + m.errors, 0),
    peakRssMb: Math.max(...rounds.map((m) => m.peakRssMb)),
  };
}

async function main(): Promise<void> {
  log(`seeding ${orgCount} organizations on ${url.pathname.slice(1)} ...`);
  await recreateDatabase();
  const targets = await seed();
  const first = targets[0] as Target;

  const bare = await start(
    ['bench/bare-read-server.ts'],
    { DATABASE_URL: url.toString(), BENCH_ORG_ID: first.orgId },
    `/contacts/${first.contactId}`,
  );
  // The flags `bin/crm` and `npm start` run the API with (a small young generation: see docs/benchmarks.md).
  const apiArgs = [
    ...(apiRoot === root ? ['--max-semi-space-size=2'] : []),
    ...(process.env.BENCH_CPU_PROF === '1' ? ['--cpu-prof', '--cpu-prof-dir', 'bench/profiles'] : []),
    ...(process.env.BENCH_API_NODE_FLAGS ?? '').split(' ').filter(Boolean),
    'src/cli.ts',
    'serve',
    '--no-worker',
  ];
  const api = await start(
    apiArgs,
    { DATABASE_URL: url.toString(), REDIS_URL: redisUrl, ADMIN_TOKEN: 'bench-admin', LOG_LEVEL: 'warn' },
    '/healthz',
    apiRoot,
  );
  try {
    const barePid = bare.child.pid as number;
    const apiPid = api.child.pid as number;
    // Warm both (JIT, pools, and every key into the API's cache: two requests per key).
    await load('bare', bare.base, targets, -2, barePid);
    await load('api', api.base, targets, -2, apiPid);
    // The machine is shared: measure in alternating rounds, so that both servers see the same weather, and
    // compare each round's pair.
    const rounds: [Measured, Measured][] = [];
    for (let round = 0; round < roundCount; round++) {
      const pair: Measured[] = [];
      for (const name of round % 2 === 0 ? ['bare', 'api'] : ['api', 'bare']) {
        pair.push(
          name === 'bare'
            ? await load('bare', bare.base, targets, duration, barePid)
            : await load('api', api.base, targets, duration, apiPid),
        );
      }
      const bareRound = pair.find((m) => m.name === 'bare') as Measured;
      const apiRound = pair.find((m) => m.name === 'api') as Measured;
      log(`round ${round + 1}: bare ${bareRound.rps.toFixed(0)} req/s, api ${apiRound.rps.toFixed(0)} req/s`);
      rounds.push([bareRound, apiRound]);
    }
    const baseline = combine(rounds.map((pair) => pair[0]));
    const measured = combine(rounds.map((pair) => pair[1]));
    const ratios = rounds.map(([b, m]) => m.rps / b.rps);
    // The API's own view of the same requests (from onRequest to the response), against what the client saw.
    const metrics = await (await fetch(`${api.base}/metrics`)).text();
    const series = (name: string) =>
      Number(
        new RegExp(`${name}\\{[^}]*route="/v1/contacts/:contact_id"[^}]*status="200"[^}]*\\} (\\S+)`).exec(
          metrics,
        )?.[1],
      );
    const serverMeanMs =
      (series('http_request_duration_seconds_sum') / series('http_request_duration_seconds_count')) * 1000;
    const line = (m: Measured) =>
      `| ${m.name === 'bare' ? 'bare Fastify + one pg select' : 'GET /v1/contacts/{id} (auth + rate limit, pg + Redis)'} | ${m.rps.toFixed(0)} | ${m.p50} ms | ${m.p99} ms | ${m.cpuMsPerRequest.toFixed(2)} ms | ${m.non2xx} | ${m.errors} | ${m.peakRssMb.toFixed(0)} MB |`;
    const ratio = median(ratios);
    const rss = measured.peakRssMb;
    process.stdout.write(
      [
        '',
        `reads: ${CONNECTIONS} connections, ${roundCount} rounds of ${duration} s per server, ${orgCount} organizations round-robin (rate limit on: each organization stays under its 20/s), API LOG_LEVEL=warn, ${apiRoot === root ? 'node --max-semi-space-size=2 (as bin/crm and npm start)' : `the API of ${apiRoot}`}`,
        '',
        '| server | req/s | p50 | p99 | server CPU / request | non-2xx | errors | peak RSS |',
        '|---|---|---|---|---|---|---|---|',
        line(baseline),
        line(measured),
        '',
        `ratio API / bare (median of the rounds ${ratios.map((value) => value.toFixed(2)).join(', ')}): ${ratio.toFixed(2)}x (target >= 0.70x)  ${ratio >= 0.7 ? 'MET' : 'NOT MET'}`,
        `API mean duration inside the server (warm-up included): ${serverMeanMs.toFixed(1)} ms; the rest of the client's latency is queueing`,
        `server CPU per request, bare / API: ${(baseline.cpuMsPerRequest / measured.cpuMsPerRequest).toFixed(2)}x`,
        `machine load average at the end: ${loadavg()
          .map((value) => value.toFixed(1))
          .join(' ')} on ${cpus().length} CPUs`,
        `API RSS under the read load: ${rss.toFixed(0)} MB (target <= 200 MB)  ${rss <= 200 ? 'MET' : 'NOT MET'}`,
        '',
      ].join('\n'),
    );
    if (measured.non2xx > 0)
      log(`warning: ${measured.non2xx} non-2xx answers from the API (429 would mean a budget was exceeded)`);
  } finally {
    await Promise.all([stop(api.child), stop(bare.child)]);
  }
}

await main();
