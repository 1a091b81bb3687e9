// `npm run bench:noisy`: one organization floods, the others read (D132, D184). A `crm serve --no-worker`
// child on PostgreSQL; organization A (100,000 contacts, 4 API keys) sends `GET /v1/contacts?q=…` and batch upserts
// of 100 contacts at 10× its rate budget (200 requests/s offered against 20/s, at most 40 in flight), while
// organizations B (3 of them, each within its budget) read their contacts (a page of 20, and one by id). Reports
// B's p50/p99 quiet and during the flood, A's answers and p99, with the bulkhead on (the defaults) and, for
// contrast, with it lifted (ORG_CONCURRENCY=1000) in the same run. Target: B's p99 during the flood ≤ 2× quiet.
//
//   BENCH_DATABASE_URL  server to use (database crm_bench_noisy is recreated every run)
//   BENCH_DURATION      seconds per phase, default 20 (BENCH_QUICK=1: 8)
//   BENCH_A_CONTACTS    contacts of A, default 100000 (BENCH_QUICK=1: 20000)
import { cpus, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_FLAGS } from '../bin/node-flags.js';
import { BULKHEAD_DEFAULTS, DATABASE_DEFAULTS } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { systemClock } from '../src/lib/clock.ts';
import { createContactsService } from '../src/modules/contacts/contacts.service.ts';
import { createOperatorService } from '../src/modules/operator/operator.service.ts';
import { freshDatabase, log } from './bench-database.ts';
import { type Started, start, stop } from './read-load.ts';
import { seed } from './seed.ts';
import { recordSummary } from './summary.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const quick = process.env.BENCH_QUICK === '1';
const duration = Number(process.env.BENCH_DURATION ?? (quick ? 8 : 20));
const aContacts = Number(process.env.BENCH_A_CONTACTS ?? (quick ? 20_000 : 100_000));
const A_KEYS = 4;
const A_OFFERED_PER_SECOND = 200;
const A_MAX_IN_FLIGHT = 40;
const B_ORGS = 3;
const B_PER_SECOND = 15;
const B_CONTACTS = 200;
const TERMS = ['garcia', 'maria', 'user12', 'lopez', 'sofia ri', 'handle_9', 'monterrey', 'user777', 'ana', 'perez'];

interface Quiet {
  key: string;
  contactIds: string[];
}

interface Sample {
  ms: number;
  status: number;
  detail?: string;
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

async function timed(url: string, key: string, init: RequestInit = {}): Promise<Sample> {
  const started = performance.now();
  try {
    const response = await fetch(url, {
      ...init,
      headers: { authorization: `Bearer ${key}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
    });
    const text = await response.text();
    const ms = performance.now() - started;
    let detail: string | undefined;
    if (response.status >= 400) {
      try {
        const body = JSON.parse(text) as { detail?: unknown };
        detail = typeof body.detail === 'string' ? body.detail : undefined;
      } catch {
        detail = undefined;
      }
    }
    return { ms, status: response.status, ...(detail ? { detail } : {}) };
  } catch {
    return { ms: performance.now() - started, status: 0 };
  }
}

/** Calls `fire` `perSecond` times a second, evenly spaced (open loop), until `until`; resolves when all answered. */
async function openLoop(perSecond: number, until: number, fire: (index: number) => Promise<void>): Promise<void> {
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let index = 0; ; index++) {
    const due = started + (index * 1000) / perSecond;
    if (Date.now() + (due - performance.now()) >= until) break;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(fire(index));
  }
  await Promise.all(pending);
}

async function seedAll(url: string): Promise<{ aKeys: string[]; quiet: Quiet[] }> {
  const database = await openDatabase({ databaseUrl: url, poolSize: 4 });
  try {
    await migrateToLatest(database.db);
    const a = await seed(database.db, aContacts, log);
    const operator = createOperatorService({ db: database.db, clock: systemClock, platform: 'sandbox' });
    const aKeys = [a.key];
    for (let index = 1; index < A_KEYS; index++)
      aKeys.push((await operator.createApiKey(a.orgId, { name: `flood ${index}` })).key);
    const contacts = createContactsService({ db: database.db, clock: systemClock });
    const quiet: Quiet[] = [];
    for (let index = 0; index < B_ORGS; index++) {
      const org = await operator.createOrganization({ name: `Quiet ${index}`, plan: 'scale' });
      const { key } = await operator.createApiKey(org.id, { name: 'reads' });
      const contactIds: string[] = [];
      for (let from = 0; from < B_CONTACTS; from += 100) {
        const items = Array.from({ length: 100 }, (_, offset) => ({
          email: `quiet${index}-${from + offset}@example.org`,
          first_name: `Quiet ${from + offset}`,
        }));
        const result = await contacts.batchUpsert(org.id, { match_on: 'email', items } as never);
        for (const item of (result as unknown as { items: { contact: { id: string } }[] }).items)
          contactIds.push(item.contact.id);
      }
      quiet.push({ key, contactIds });
    }
    return { aKeys, quiet };
  } finally {
    await database.close();
  }
}

/** B's reads for `seconds`: each quiet organization at B_PER_SECOND, a page of 20 and a contact by id in turn. */
async function quietReads(base: string, quiet: Quiet[], until: number): Promise<Sample[]> {
  const samples: Sample[] = [];
  await Promise.all(
    quiet.map((org) =>
      openLoop(B_PER_SECOND, until, async (index) => {
        const path =
          index % 2 === 0
            ? '/v1/contacts?limit=20'
            : `/v1/contacts/${org.contactIds[index % org.contactIds.length] as string}`;
        samples.push(await timed(`${base}${path}`, org.key));
      }),
    ),
  );
  return samples;
}

/** A's flood: searches and batch upserts from several keys at 10× its budget, at most A_MAX_IN_FLIGHT at once. */
async function flood(base: string, aKeys: string[], until: number): Promise<{ samples: Sample[]; skipped: number }> {
  const samples: Sample[] = [];
  let inFlight = 0;
  let skipped = 0;
  let batch = 0;
  await openLoop(A_OFFERED_PER_SECOND, until, async (index) => {
    if (inFlight >= A_MAX_IN_FLIGHT) {
      skipped++;
      return;
    }
    inFlight++;
    const key = aKeys[index % aKeys.length] as string;
    try {
      if (index % 2 === 0) {
        const term = encodeURIComponent(TERMS[(index / 2) % TERMS.length] as string);
        samples.push(await timed(`${base}/v1/contacts?q=${term}&limit=50`, key));
      } else {
        const run = batch++;
        const items = Array.from({ length: 100 }, (_, offset) => ({
          email: `flood${run}-${offset}@example.net`,
          first_name: 'Flood',
          city: `City ${offset}`,
        }));
        samples.push(
          await timed(`${base}/v1/contacts/batch-upsert`, key, {
            method: 'POST',
            body: JSON.stringify({ match_on: 'email', items }),
          }),
        );
      }
    } finally {
      inFlight--;
    }
  });
  return { samples, skipped };
}

interface Phase {
  name: string;
  b: Sample[];
  a?: { samples: Sample[]; skipped: number };
}

function describePhase(phase: Phase): string {
  const bOk = phase.b.filter((s) => s.status === 200).map((s) => s.ms);
  const bFailed = phase.b.length - bOk.length;
  const bFailures = [...new Set(phase.b.filter((s) => s.status !== 200).map((s) => `${s.status} ${s.detail ?? ''}`))];
  let line = `${phase.name}: B ${phase.b.length} reads, p50 ${percentile(bOk, 50).toFixed(1)} ms, p99 ${percentile(bOk, 99).toFixed(1)} ms, ${bFailed} not 200 (${bFailures.join(', ')})`;
  if (phase.a) {
    const counts = new Map<string, number>();
    for (const s of phase.a.samples) {
      const label = s.status === 200 ? '200' : `${s.status}${s.detail ? ` ${s.detail}` : ''}`;
      counts.set(label, (counts.get(label) ?? 0) + 1);
    }
    const aOk = phase.a.samples.filter((s) => s.status === 200).map((s) => s.ms);
    line += `; A ${phase.a.samples.length} answered (${[...counts].map(([k, v]) => `${k}: ${v}`).join(', ')}), ${phase.a.skipped} not sent (40 in flight), A's 200s p50 ${percentile(aOk, 50).toFixed(1)} ms p99 ${percentile(aOk, 99).toFixed(1)} ms`;
  }
  return line;
}

function startApi(url: string, env: Record<string, string>): Promise<Started> {
  return start(
    [...SERVER_NODE_FLAGS, 'src/cli/main.ts', 'serve', '--no-worker'],
    {
      DATABASE_URL: url,
      ADMIN_TOKEN: 'bench-admin',
      LOG_LEVEL: 'error',
      ...(process.env.PGOPTIONS ? { PGOPTIONS: process.env.PGOPTIONS } : {}),
      ...env,
    },
    '/healthz',
    root,
  );
}

async function runPhases(base: string, aKeys: string[], quiet: Quiet[], withQuiet: boolean, label: string) {
  const phases: Phase[] = [];
  // Warm-up: JIT, the pool, every key into the cache.
  await quietReads(base, quiet, Date.now() + 2000);
  if (withQuiet) {
    phases.push({ name: `${label}, quiet`, b: await quietReads(base, quiet, Date.now() + duration * 1000) });
    log(describePhase(phases.at(-1) as Phase));
  }
  const until = Date.now() + duration * 1000;
  const [b, a] = await Promise.all([quietReads(base, quiet, until), flood(base, aKeys, until)]);
  phases.push({ name: `${label}, A flooding`, b, a });
  log(describePhase(phases.at(-1) as Phase));
  // The readiness probe stayed green through it (busy is not down).
  const ready = await fetch(`${base}/readyz`);
  log(`${label}: /readyz after the flood: ${ready.status}`);
  await ready.arrayBuffer();
  return phases;
}

async function main(): Promise<void> {
  const url = await freshDatabase('crm_bench_noisy');
  log(`seeding A (${aContacts.toLocaleString('en')} contacts, ${A_KEYS} keys) and ${B_ORGS} quiet organizations ...`);
  const { aKeys, quiet } = await seedAll(url);
  log(`load average ${loadavg()[0]?.toFixed(1)}, ${cpus().length} CPUs; ${duration} s per phase`);

  // BENCH_ORG_CONCURRENCY and BENCH_ORG_BUSY_PERCENT try other limits than the defaults (ORG_CONCURRENCY,
  // ORG_BUSY_PERCENT).
  const tried = process.env.BENCH_ORG_CONCURRENCY;
  const share = process.env.BENCH_ORG_BUSY_PERCENT;
  const on = await startApi(url, {
    ...(tried ? { ORG_CONCURRENCY: tried } : {}),
    ...(share ? { ORG_BUSY_PERCENT: share } : {}),
  });
  const limit = `${tried ?? BULKHEAD_DEFAULTS.limit} expensive at once, busy ≤ ${share ?? BULKHEAD_DEFAULTS.share * 100} %`;
  let withBulkhead: Phase[];
  try {
    withBulkhead = await runPhases(on.base, aKeys, quiet, true, `bulkhead on (${limit})`);
  } finally {
    await stop(on.child);
  }
  const off = await startApi(url, { ORG_CONCURRENCY: '1000', ORG_QUEUE: '1000' });
  let withoutBulkhead: Phase[];
  try {
    withoutBulkhead = await runPhases(off.base, aKeys, quiet, false, 'bulkhead lifted');
  } finally {
    await stop(off.child);
  }

  const okMs = (phase: Phase) => phase.b.filter((s) => s.status === 200).map((s) => s.ms);
  const [quietPhase, floodPhase] = withBulkhead as [Phase, Phase];
  const liftedPhase = withoutBulkhead[0] as Phase;
  const quietP99 = percentile(okMs(quietPhase), 99);
  const floodP99 = percentile(okMs(floodPhase), 99);
  const liftedP99 = percentile(okMs(liftedPhase), 99);
  const bFailed = floodPhase.b.filter((s) => s.status !== 200).length;
  const ratio = floodP99 / quietP99;
  const aOk = (phase: Phase) => (phase.a?.samples ?? []).filter((s) => s.status === 200).map((s) => s.ms);

  process.stdout.write(
    `\n## Noisy neighbour (pool ${DATABASE_DEFAULTS.poolSize}, bulkhead ${limit} per organization, ` +
      `${duration} s per phase, load average ${loadavg()
        .map((value) => value.toFixed(1))
        .join(' ')})\n\n` +
      '| Phase | B reads | B p50 ms | B p99 ms | B not 200 | A answered 200 / 429 / 503 busy | A 200s p99 ms |\n' +
      '|---|---|---|---|---|---|---|\n' +
      [quietPhase, floodPhase, liftedPhase]
        .map((phase) => {
          const a = phase.a?.samples ?? [];
          const count = (test: (s: Sample) => boolean) => a.filter(test).length;
          return `| ${phase.name} | ${phase.b.length} | ${percentile(okMs(phase), 50).toFixed(1)} | ${percentile(okMs(phase), 99).toFixed(1)} | ${phase.b.filter((s) => s.status !== 200).length} | ${phase.a ? `${count((s) => s.status === 200)} / ${count((s) => s.status === 429)} / ${count((s) => s.detail === 'service_busy')}` : '—'} | ${phase.a ? percentile(aOk(phase), 99).toFixed(1) : '—'} |`;
        })
        .join('\n') +
      `\n\nB's p99 during the flood / quiet: ${ratio.toFixed(2)}× with the bulkhead (target ≤ 2×), ` +
      `${(liftedP99 / quietP99).toFixed(2)}× with it lifted.\n`,
  );
  recordSummary([
    {
      path: 'noisy neighbour: B reads while A floods',
      row: `A at 10× its budget (q= and batch upserts, ${A_KEYS} keys), bulkhead ${limit}`,
      baseline: `B quiet: p99 ${quietP99.toFixed(1)} ms`,
      value: `B p99 ${floodP99.toFixed(1)} ms (lifted: ${liftedP99.toFixed(1)} ms), ${bFailed} B failures`,
      ratio,
      p50Ms: percentile(okMs(floodPhase), 50),
      p99Ms: floodP99,
      rssMb: null,
      target: "B's p99 ≤ 2× quiet, no B failure",
      met: ratio <= 2 && bFailed === 0,
    },
  ]);
}

await main();
