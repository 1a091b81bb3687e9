// `npm run bench:history`: do the fan-out, a send, the reads and the lists keep their figures with
// a year of history in the database? A template database is seeded once with other organizations' history —
// 10,000,000 past recipients of finished broadcasts spread over the last year, 5,000,000 conversation messages and
// 5,000,000 webhook deliveries with their events inside the 30 days retention keeps (D182) — and each chosen
// benchmark runs twice in turn, on an empty database and on a copy of that template (`CREATE DATABASE … TEMPLATE`),
// each writing its rows to its own summary. Every row of the history pass is then set beside the same row of the
// empty pass (its same-run baseline): throughput rows by their value, latency rows by their p99; target within 10 %.
//
//   BENCH_HISTORY_SCALE    fraction of the sizes above (default 1; BENCH_QUICK=1: 0.1)
//   BENCH_HISTORY_BENCHES  benchmarks to run (default "sends,broadcasts,reads,contacts")
//   BENCH_HISTORY_KEEP=1   reuse the template seeded by an earlier run (same scale) instead of seeding again
//
// The history is written with `session_replication_role = replica` (no triggers, no foreign-key checks: its rows are
// consistent by construction and all older than the 24-hour window the triggers keep), then VACUUM ANALYZE.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { wire } from '../src/wiring.ts';
import { benchServer, freshDatabase, log, poster, unlimited } from './bench-database.ts';
import { readSummary, recordSummary, type SummaryRow } from './summary.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const quick = process.env.BENCH_QUICK === '1';
const scale = Number(process.env.BENCH_HISTORY_SCALE ?? (quick ? 0.1 : 1));
const TEMPLATE = 'crm_bench_history_tpl';
const ADMIN = 'bench-admin';
const ORGS = 20;
const RECIPIENTS_PER_BROADCAST = 1000;
const sizes = {
  recipients: Math.round(10_000_000 * scale),
  messages: Math.round(5_000_000 * scale),
  deliveries: Math.round(5_000_000 * scale),
  contactsPerOrg: Math.max(100, Math.round(10_000 * scale)),
};
const BENCHES: Record<string, string> = {
  sends: 'bench/sends.ts',
  broadcasts: 'bench/broadcasts.ts',
  reads: 'bench/reads.ts',
  contacts: 'bench/run.ts',
};
const chosen = (process.env.BENCH_HISTORY_BENCHES ?? 'sends,broadcasts,reads,contacts').split(',').filter(Boolean);

const urlOf = (name: string) => {
  const url = new URL(benchServer);
  url.pathname = `/${name}`;
  return url.toString();
};

async function templateReady(): Promise<boolean> {
  const admin = new pg.Client({ connectionString: urlOf('postgres') });
  await admin.connect();
  try {
    const found = await admin.query('select 1 from pg_database where datname = $1', [TEMPLATE]);
    if (found.rowCount === 0) return false;
  } finally {
    await admin.end();
  }
  const client = new pg.Client({ connectionString: urlOf(TEMPLATE) });
  await client.connect();
  try {
    const marker = await client.query(`select value from app_state where key = 'bench_history_scale'`);
    // `value` is jsonb: the marker written as '1' comes back as the number 1.
    return String(marker.rows[0]?.value) === String(scale);
  } catch {
    return false;
  } finally {
    await client.end();
  }
}

/** The organizations the history belongs to, made through the operator API as an operator would. */
async function organizations(databaseUrl: string) {
  const database = await openDatabase({ databaseUrl, poolSize: 4 });
  await migrateToLatest(database.db);
  const app = await buildApp(
    wire({ database, rateLimitStore: unlimited, adminToken: ADMIN, webhookAllowHosts: ['127.0.0.1'] }),
  );
  const call = poster(app);
  const made: { org: string; account: string; channel: string; template: string; endpoint: string }[] = [];
  for (let index = 0; index < ORGS; index++) {
    const org = await call('/admin/v1/organizations', { name: `History ${index}` }, ADMIN);
    const { key } = await call(`/admin/v1/organizations/${org.id}/api-keys`, {}, ADMIN);
    const account = await call(
      `/admin/v1/organizations/${org.id}/messaging-accounts`,
      { balance: 1e6, numbers: [{ phone: `+1555019${String(index).padStart(4, '0')}` }] },
      ADMIN,
    );
    const template = await call(
      '/v1/templates',
      {
        name: `history_${index}`,
        language: 'en_US',
        category: 'MARKETING',
        components: [{ type: 'BODY', text: 'Our news, {{1}}', example: { body_text: [['Ana']] } }],
      },
      key,
    );
    await call(`/admin/v1/sandbox/templates/${template.id}/review`, { event: 'APPROVED' }, ADMIN);
    const endpoint = await call('/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/history', events: ['*'] }, key);
    made.push({
      org: org.id,
      account: account.id,
      channel: account.numbers[0].id,
      template: template.id,
      endpoint: endpoint.id,
    });
  }
  await app.close();
  await database.close();
  return made;
}

async function seedTemplate(): Promise<void> {
  const databaseUrl = await freshDatabase(TEMPLATE);
  const started = Date.now();
  const orgs = await organizations(databaseUrl);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const step = async (what: string, text: string, values: unknown[]) => {
    const t0 = Date.now();
    const result = await client.query(text, values);
    log(`  ${what}: ${result.rowCount?.toLocaleString('en')} rows in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  };
  // The endpoints' secrets were sealed under this process's key: store them in clear, as rows from before sealing
  // are, so that whichever server starts on a copy seals them under its own key (D148) instead of refusing to start.
  await client.query(`update webhook_endpoints set secret = 'whsec_aGlzdG9yeWhpc3Rvcnk=', secrets_key_id = null`);
  await client.query('set session_replication_role = replica');
  const broadcastsPerOrg = Math.max(1, Math.round(sizes.recipients / ORGS / RECIPIENTS_PER_BROADCAST));
  const messagesPerContact = Math.max(1, Math.round(sizes.messages / ORGS / sizes.contactsPerOrg));
  const deliveriesPerOrg = Math.round(sizes.deliveries / ORGS);
  for (const [index, o] of orgs.entries()) {
    log(`history of organization ${index + 1}/${orgs.length} (${o.org})`);
    const phone = (expression: string) => `'+1800' || lpad('${index}', 3, '0') || lpad((${expression})::text, 7, '0')`;
    await step(
      'contacts',
      `insert into contacts (org_id, id, first_name, phone, country, origin, messaging_status, created_at, updated_at)
       select $1, 'ct_h' || $2 || '_' || g, 'History ' || g, ${phone('g')}, 'MX', 'API', 'verified',
         now() - interval '365 days' + g * interval '1 second', now() - interval '300 days'
       from generate_series(0, $3 - 1) g`,
      [o.org, index, sizes.contactsPerOrg],
    );
    await step(
      'broadcasts',
      `insert into broadcasts (org_id, id, template_id, template_name, template_language, template_category,
         account_id, channel_id, requested, created_at, updated_at, finished_at)
       select $1, 'bc_h' || $2 || '_' || b, $3, 'history_' || $2, 'en_US', 'MARKETING', $4, $5, $6,
         now() - interval '365 days' + (b::float / $7) * interval '364 days',
         now() - interval '365 days' + (b::float / $7) * interval '364 days' + interval '1 hour',
         now() - interval '365 days' + (b::float / $7) * interval '364 days' + interval '1 hour'
       from generate_series(0, $7 - 1) b`,
      [o.org, index, o.template, o.account, o.channel, RECIPIENTS_PER_BROADCAST, broadcastsPerOrg],
    );
    await step(
      'recipients',
      `insert into broadcast_recipients (org_id, broadcast_id, position, account_id, channel_id, contact_id, phone,
         send_components, status, error, charged, platform_message_id, attempts, next_attempt_at, queued_at,
         reached_at, sent_at, delivered_at, read_at, failed_at, updated_at)
       select $1, b.id, p, $3, $4, 'ct_h' || $2 || '_' || ((b.n * $5 + p) % $6), ${phone(`(b.n * $5 + p) % $6`)},
         '[{"type":"body","parameters":[{"type":"text","text":"Ana"}]}]',
         case when p % 20 = 0 then 'failed' when p % 7 = 0 then 'delivered' else 'read' end,
         case when p % 20 = 0 then 'platform_error' end,
         case when p % 20 = 0 then 0 else 0.0125 end,
         case when p % 20 <> 0 then 'wamid.h' || $2 || '_' || b.n || '_' || p end,
         1, b.created_at, b.created_at, b.created_at, b.created_at,
         case when p % 20 <> 0 then b.created_at + interval '5 seconds' end,
         case when p % 20 <> 0 and p % 7 <> 0 then b.created_at + interval '1 minute' end,
         case when p % 20 = 0 then b.created_at + interval '2 seconds' end,
         b.created_at + interval '1 minute'
       from (select id, created_at, row_number() over (order by id) - 1 as n from broadcasts where org_id = $1) b,
         generate_series(0, $5 - 1) p`,
      [o.org, index, o.account, o.channel, RECIPIENTS_PER_BROADCAST, sizes.contactsPerOrg],
    );
    await step(
      'conversations',
      `insert into conversations (org_id, id, contact_id, channel_id, last_message_at, last_inbound_at, created_at,
         updated_at)
       select $1, 'cv_h' || $2 || '_' || g, 'ct_h' || $2 || '_' || g, $3, now() - interval '2 days',
         now() - interval '2 days', now() - interval '360 days', now() - interval '2 days'
       from generate_series(0, $4 - 1) g`,
      [o.org, index, o.channel, sizes.contactsPerOrg],
    );
    await step(
      'messages',
      `insert into messages (org_id, id, conversation_id, contact_id, channel_id, direction, sender, type, text, phone,
         platform_message_id, status, created_at, sent_at, delivered_at, read_at, updated_at)
       select $1, 'msg_h' || $2 || '_' || g || '_' || m, 'cv_h' || $2 || '_' || g, 'ct_h' || $2 || '_' || g, $3,
         case when m % 2 = 0 then 'inbound' else 'outbound' end, case when m % 2 = 0 then 'contact' else 'agent' end,
         'text', 'Message ' || m || ' of a long conversation', ${phone('g')}, 'wamid.hm' || $2 || '_' || g || '_' || m,
         case when m % 2 = 0 then 'received' else 'read' end,
         now() - interval '360 days' + (m::float / $5) * interval '358 days',
         now() - interval '360 days' + (m::float / $5) * interval '358 days',
         now() - interval '360 days' + (m::float / $5) * interval '358 days',
         now() - interval '360 days' + (m::float / $5) * interval '358 days',
         now() - interval '360 days' + (m::float / $5) * interval '358 days'
       from generate_series(0, $4 - 1) g, generate_series(0, $5 - 1) m`,
      [o.org, index, o.channel, sizes.contactsPerOrg, messagesPerContact],
    );
    await step(
      'webhook events',
      `insert into webhook_events (org_id, id, type, payload, created_at)
       select $1, 'evt_h' || $2 || '_' || g, 'broadcast.recipient.updated',
         '{"type":"broadcast.recipient.updated","data":{"status":"read"}}',
         now() - interval '29 days' + (g::float / $3) * interval '29 days'
       from generate_series(0, $3 - 1) g`,
      [o.org, index, deliveriesPerOrg],
    );
    await step(
      'webhook deliveries',
      `insert into webhook_deliveries (org_id, id, endpoint_id, event_id, event_type, status, attempts,
         last_status_code, next_attempt_at, lane, attempt_log, created_at, updated_at)
       select $1, 'whd_h' || $2 || '_' || g, $3, 'evt_h' || $2 || '_' || g, 'broadcast.recipient.updated',
         'succeeded', 1, 200, e.created_at, 1, '[]', e.created_at, e.created_at + interval '1 second'
       from generate_series(0, $4 - 1) g
         join webhook_events e on e.org_id = $1 and e.id = 'evt_h' || $2 || '_' || g`,
      [o.org, index, o.endpoint, deliveriesPerOrg],
    );
  }
  await client.query('set session_replication_role = origin');
  await client.query(
    `insert into app_state (key, value) values ('bench_history_scale', $1)
     on conflict (key) do update set value = excluded.value`,
    [String(scale)],
  );
  log('vacuum analyze');
  await client.query('vacuum analyze');
  const size = await client.query('select pg_size_pretty(pg_database_size(current_database())) as size');
  await client.end();
  log(`template ${TEMPLATE} seeded in ${((Date.now() - started) / 1000).toFixed(0)} s (${size.rows[0].size})`);
}

/** The figure a row is judged by: a throughput's value, else its p99 (lower is better). */
function figure(row: SummaryRow): { value: number; higherIsBetter: boolean } | null {
  const throughput = /^([\d,.]+)\s*(?:req|msg|contacts|recipients)?\/s/.exec(row.value);
  if (throughput) return { value: Number((throughput[1] as string).replace(/,/g, '')), higherIsBetter: true };
  if (row.p99Ms !== null) return { value: row.p99Ms, higherIsBetter: false };
  return null;
}

async function main(): Promise<void> {
  if (process.env.BENCH_HISTORY_KEEP === '1' && (await templateReady())) log(`reusing ${TEMPLATE} (scale ${scale})`);
  else {
    log(
      `seeding ${TEMPLATE}: ${sizes.recipients.toLocaleString('en')} recipients, ` +
        `${sizes.messages.toLocaleString('en')} messages, ${sizes.deliveries.toLocaleString('en')} deliveries`,
    );
    await seedTemplate();
  }
  const compared: SummaryRow[] = [];
  for (const name of chosen) {
    const script = BENCHES[name];
    if (!script) throw new Error(`unknown benchmark ${name} (one of ${Object.keys(BENCHES).join(', ')})`);
    const passes: Record<string, SummaryRow[]> = {};
    for (const pass of ['empty', 'history']) {
      const summary = `bench/results/history-${name}-${pass}.jsonl`;
      const env: NodeJS.ProcessEnv = { ...process.env, BENCH_SUMMARY: summary };
      delete env.BENCH_TEMPLATE;
      if (pass === 'history') env.BENCH_TEMPLATE = TEMPLATE;
      // The contact list keeps its seeded database between runs: give each pass its own, made afresh.
      if (name === 'contacts') {
        env.BENCH_DATABASE_URL = urlOf(`crm_bench_list_${pass}`);
        env.BENCH_FRESH = '1';
      }
      mkdirSync(resolve(root, 'bench/results'), { recursive: true });
      writeFileSync(resolve(root, summary), '');
      log(`\n== ${name}, ${pass} database, load average ${loadavg()[0]?.toFixed(1)}`);
      const run = spawnSync(process.execPath, [script], { cwd: root, stdio: 'inherit', env });
      if (run.status !== 0) throw new Error(`${script} failed in the ${pass} pass (exit ${run.status ?? run.signal})`);
      passes[pass] = readSummaryFrom(summary);
    }
    for (const row of passes.history ?? []) {
      const before = (passes.empty ?? []).find((other) => other.path === row.path && other.row === row.row);
      const now = figure(row);
      const then = before ? figure(before) : null;
      if (!before || !now || !then || then.value === 0) continue;
      const change = now.higherIsBetter ? then.value / now.value - 1 : now.value / then.value - 1;
      compared.push({
        path: `a year of history: ${row.path}`,
        row: row.row,
        baseline: `same row, empty database, same run: ${then.higherIsBetter ? before.value : `p99 ${then.value.toFixed(1)} ms`}`,
        value: now.higherIsBetter ? row.value : `p99 ${now.value.toFixed(1)} ms`,
        ratio: now.value / then.value,
        p50Ms: row.p50Ms,
        p99Ms: row.p99Ms,
        rssMb: row.rssMb,
        target: 'within 10 % of the empty database',
        met: change <= 0.1,
      });
    }
  }
  recordSummary(compared);
  process.stdout.write(
    [
      '',
      `A year of history (scale ${scale}: ${sizes.recipients.toLocaleString('en')} past recipients, ` +
        `${sizes.messages.toLocaleString('en')} messages, ${sizes.deliveries.toLocaleString('en')} webhook deliveries` +
        ` in ${ORGS} other organizations), each row beside the same row on an empty database in this run:`,
      '',
      '| Path | Row | Empty database | With history | Change | Within 10 % |',
      '|---|---|---:|---:|---:|---|',
      ...compared.map((row) => {
        const change = row.ratio === null ? '—' : `${((row.ratio - 1) * 100).toFixed(1)} %`;
        return `| ${row.path.replace('a year of history: ', '')} | ${row.row} | ${row.baseline.replace(
          'same row, empty database, same run: ',
          '',
        )} | ${row.value} | ${change} | ${row.met ? 'yes' : 'no'} |`;
      }),
      '',
    ].join('\n'),
  );
}

function readSummaryFrom(file: string): SummaryRow[] {
  const previous = process.env.BENCH_SUMMARY;
  process.env.BENCH_SUMMARY = file;
  try {
    return readSummary();
  } finally {
    if (previous === undefined) delete process.env.BENCH_SUMMARY;
    else process.env.BENCH_SUMMARY = previous;
  }
}

await main();
