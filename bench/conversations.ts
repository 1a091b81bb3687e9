// `node bench/conversations.ts` (decisions §19): a team's inbox at scale. One organization with 100,000
// conversations (BENCH_CONVERSATIONS; 20,000 with BENCH_QUICK=1), each with its contact and a message, spread over
// statuses, assignees (5 people, the assistant, nobody), 3 teams, priorities and labels as a busy team's would be,
// and every filter of `GET /v1/conversations` measured through real HTTP (the API in this process, on PostgreSQL,
// without a rate limit): one at a time and 8 in flight, p50/p99 each. Baseline in the same run: a bare Fastify +
// pg server answering one fixed page of 50 conversations by latest activity (no auth, no filter, no cursor, no
// contact or last message). Target: p99 <= 20 ms for every filter, one at a time.
//
//   BENCH_DATABASE_URL    server to use (a fresh database crm_bench_conversations is made on it)
//   BENCH_CONVERSATIONS   conversations to seed (100,000; 20,000 with BENCH_QUICK=1)
//   BENCH_REQUESTS        requests per row (200; 100 with BENCH_QUICK=1)
import Fastify from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { wire } from '../src/wiring.ts';
import { freshDatabase, log, poster, unlimited } from './bench-database.ts';
import { measure, type Result, rssOf, table } from './measure.ts';
import { recordSummary } from './summary.ts';

const quick = process.env.BENCH_QUICK === '1';
const COUNT = Number(process.env.BENCH_CONVERSATIONS ?? (quick ? 20_000 : 100_000));
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? (quick ? 100 : 200));
const CONCURRENCY = 8;
const TARGET_P99_MS = 20;
const ADMIN = 'bench-admin';

const BARE_PAGE = `select id, contact_id, channel_id, status, assignee_type, assignee_user_id, team_id, priority, labels,
    waiting_since, first_reply_at, last_activity_at, last_message_at, last_inbound_at, unread_count, created_at,
    updated_at
  from conversations where org_id = $1 order by last_activity_at desc, id desc limit 50`;

async function main(): Promise<void> {
  const url = await freshDatabase('crm_bench_conversations');
  const database = await openDatabase({ databaseUrl: url, poolSize: 20 });
  await migrateToLatest(database.db);
  const app = await buildApp(wire({ database, rateLimitStore: unlimited, adminToken: ADMIN }));
  const post = poster(app);

  const org = await post('/admin/v1/organizations', { name: 'bench-inbox', plan: 'scale' }, ADMIN);
  const { key } = await post(`/admin/v1/organizations/${org.id}/api-keys`, { name: 'bench' }, ADMIN);
  const account = await post(
    `/admin/v1/organizations/${org.id}/messaging-accounts`,
    { numbers: [{ phone: '+15550000001' }] },
    ADMIN,
  );
  const channelId = account.numbers[0].id as string;
  const users: string[] = [];
  for (let index = 0; index < 5; index++) {
    const user = await post(
      `/admin/v1/organizations/${org.id}/users`,
      { email: `agent${index}@bench.example`, name: `Agent ${index}`, role: 'agent' },
      ADMIN,
    );
    users.push(user.id);
  }
  const teams: string[] = [];
  for (const name of ['Sales', 'Support', 'Billing']) {
    teams.push((await post('/v1/teams', { name, member_ids: users }, key)).id);
  }

  // The inbox, seeded in chunks: a contact, its conversation and its last message (from the contact) each.
  const started = Date.now();
  const chunk = 20_000;
  for (let from = 1; from <= COUNT; from += chunk) {
    const to = Math.min(COUNT, from + chunk - 1);
    await database.db.transaction().execute(async (trx) => {
      await sql`insert into contacts (org_id, id, first_name, last_name, phone, origin, messaging_status, created_at,
          updated_at)
        select ${org.id}, 'ct_bench' || lpad(i::text, 9, '0'), 'First' || (i % 997), 'Last' || (i % 991),
          '+1' || (3000000000 + i)::text, 'API', 'unverified', now() - interval '120 days', now() - interval '120 days'
        from generate_series(${from}::bigint, ${to}::bigint) as i`.execute(trx);
      // Statuses: half open, 10 % pending, 5 % snoozed, 35 % resolved. Assignees: 30 % nobody, 5 % the assistant,
      // the rest over 5 people. 80 % of a team. Priorities mostly none. Labels: vip 20 %, refund 5 %, spanish 1 %.
      await sql`insert into conversations (org_id, id, contact_id, channel_id, last_message_at, last_inbound_at,
          status, snoozed_until, assignee_type, assignee_user_id, team_id, priority, labels, label_keys,
          waiting_since, first_reply_at, last_activity_at, created_at, updated_at)
        select ${org.id}, 'cv_bench' || lpad(i::text, 9, '0'), 'ct_bench' || lpad(i::text, 9, '0'), ${channelId},
          at, at,
          s.status, case when s.status = 'snoozed' then now() + interval '1 day' end,
          case when i % 20 < 6 then null when i % 20 = 6 then 'ai' else 'user' end,
          case when i % 20 > 6 then (${sql.val(users)}::text[])[1 + (i * 7) % 5] end,
          case when i % 5 = 0 then null else (${sql.val(teams)}::text[])[1 + (i * 11) % 3] end,
          (array['none','none','none','none','none','none','none','low','medium','high','urgent'])[1 + (i * 13) % 11],
          l.labels, l.labels,
          case when s.status in ('open', 'pending') and i % 5 < 2 then at end,
          case when i % 5 >= 2 then at + interval '5 minutes' end,
          at, at - interval '1 day', at
        from generate_series(${from}::bigint, ${to}::bigint) as i,
          lateral (select now() - ((i * 7919) % (90 * 86400)) * interval '1 second' as at) t,
          lateral (select case when i % 20 < 10 then 'open' when i % 20 < 12 then 'pending'
            when i % 20 = 12 then 'snoozed' else 'resolved' end as status) s,
          lateral (select array_remove(array[case when i % 5 = 0 then 'vip' end,
            case when i % 20 = 1 then 'refund' end, case when i % 100 = 3 then 'spanish' end], null) as labels) l`.execute(
        trx,
      );
      await sql`insert into messages (org_id, id, conversation_id, contact_id, channel_id, direction, sender, type, text,
          phone, platform_message_id, status, created_at, updated_at)
        select c.org_id, 'msg_bench' || substr(c.id, 9), c.id, c.contact_id, c.channel_id, 'inbound', 'contact', 'text',
          'Hello, where is my order number ' || substr(c.id, 9) || '?', '+1' || (3000000000 + substr(c.id, 9)::bigint)::text,
          'wamid.bench' || substr(c.id, 9), 'received', c.last_activity_at, c.last_activity_at
        from conversations c where c.org_id = ${org.id} and c.id between ${`cv_bench${String(from).padStart(9, '0')}`}
          and ${`cv_bench${String(to).padStart(9, '0')}`}`.execute(trx);
    });
    log(`seeded ${to.toLocaleString('en')} / ${COUNT.toLocaleString('en')} conversations`);
  }
  log(`seeded in ${Math.round((Date.now() - started) / 1000)} s`);
  for (const name of ['contacts', 'conversations', 'messages'])
    await sql`vacuum analyze ${sql.table(name)}`.execute(database.db);

  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const pool = new pg.Pool({ connectionString: url, max: 20 });
  const bare = Fastify({ logger: false });
  bare.get('/page', async () => ({ items: (await pool.query(BARE_PAGE, [org.id])).rows, next_cursor: null }));
  const bareBase = await bare.listen({ port: 0, host: '127.0.0.1' });

  const get = (target: string) => async () => {
    const response = await fetch(target, { headers: { authorization: `Bearer ${key}` } });
    if (response.status !== 200) throw new Error(`${target}: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
  };
  const rows: [string, string][] = [
    ['latest activity (no filter)', ''],
    ['status=open (the inbox)', 'status=open'],
    ['status=resolved', 'status=resolved'],
    ['assignee=unassigned, open', 'assignee=unassigned&status=open'],
    ['assignee=ai', 'assignee=ai'],
    ['assignee=<person>, open (Mine)', `assignee=${users[0]}&status=open`],
    ['team_id, open', `team_id=${teams[1]}&status=open`],
    ['label=vip (20 %)', 'label=vip'],
    ['label=spanish (1 %)', 'label=spanish'],
    ['priority=urgent', 'priority=urgent'],
    ['sort=waiting_since', 'sort=waiting_since'],
    ['sort=waiting_since, team, open', `sort=waiting_since&team_id=${teams[0]}&status=open`],
  ];
  const results: Result[] = [];
  const bareOne = await measure('bare Fastify + pg page, 1 at a time', REQUESTS, 1, get(`${bareBase}/page`));
  const bareMany = await measure(`bare, ${CONCURRENCY} in flight`, REQUESTS, CONCURRENCY, get(`${bareBase}/page`));
  results.push(bareOne, bareMany);
  const summary = [];
  for (const [name, query] of rows) {
    const target = `${base}/v1/conversations?limit=50${query ? `&${query}` : ''}`;
    for (let warm = 0; warm < 5; warm++) await get(target)();
    const one = await measure(`${name}, 1 at a time`, REQUESTS, 1, get(target));
    const many = await measure(`${name}, ${CONCURRENCY} in flight`, REQUESTS, CONCURRENCY, get(target));
    results.push(one, many);
    summary.push({
      path: 'GET /v1/conversations',
      row: `${name}, ${COUNT.toLocaleString('en')} conversations`,
      baseline: `bare Fastify + pg page of 50: p99 ${bareOne.p99.toFixed(1)} ms, ${bareOne.throughput.toFixed(0)} req/s`,
      value: `${one.throughput.toFixed(0)} req/s one at a time; ${many.throughput.toFixed(0)} req/s ${CONCURRENCY} in flight`,
      ratio: Number((one.throughput / bareOne.throughput).toFixed(2)),
      p50Ms: Number(one.p50.toFixed(1)),
      p99Ms: Number(one.p99.toFixed(1)),
      rssMb: Math.round(rssOf(process.pid) / 1024 / 1024),
      target: `p99 <= ${TARGET_P99_MS} ms`,
      met: one.p99 <= TARGET_P99_MS,
    });
  }
  process.stdout.write(`\n## Conversations (${COUNT.toLocaleString('en')}), decisions §19\n\n${table(results)}\n`);
  process.stdout.write(`\nRSS of the API (this process): ${Math.round(rssOf(process.pid) / 1024 / 1024)} MB\n`);
  recordSummary(summary);
  await bare.close();
  await pool.end();
  await app.close();
  await database.close();
}

await main();
