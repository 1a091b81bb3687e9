// Scratch: one server under read load, its user and system CPU per request.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { load, start, stop, type Target } from './read-load.ts';
const url = 'postgres://postgres@127.0.0.1:5432/crm_bench_reads';
const c = new pg.Client({ connectionString: url });
await c.connect();
// keys are not recoverable from the database: recreate one key per org via the admin API instead
const which = process.argv[2] ?? 'api';
const flags = (process.env.FLAGS ?? '--max-semi-space-size=2').split(' ').filter(Boolean);
const server = which === 'bare'
  ? await start(['bench/bare-read-server.ts'], { DATABASE_URL: url }, '/contacts/x', process.cwd())
  : await start([...flags, 'src/cli.ts', 'serve', '--no-worker'], { DATABASE_URL: url, REDIS_URL: 'redis://127.0.0.1:6379', ADMIN_TOKEN: 'bench-admin', LOG_LEVEL: 'warn' }, '/healthz', process.cwd());
const orgs = (await c.query('select o.id as org, min(c.id) as contact from organizations o join contacts c on c.org_id = o.id group by o.id limit 300')).rows;
const targets: Target[] = [];
for (const row of orgs) {
  const r = await fetch(`${server.base}/admin/v1/organizations/${row.org}/api-keys`, { method: 'POST', headers: { authorization: 'Bearer bench-admin', 'content-type': 'application/json' }, body: JSON.stringify({ name: 'p' }) });
  const body = await r.json() as { key?: string };
  targets.push({ orgId: row.org, key: body.key ?? '', contactId: row.contact });
}
await c.end();
const path = (t: Target) => which === 'bare' ? `/contacts/${t.contactId}` : `/v1/contacts/${t.contactId}`;
await load(which, server, targets, -2, path);
const stat = () => readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
for (let i = 0; i < Number(process.env.ROUNDS ?? 2); i++) {
  const before = stat();
  const m = await load(which, server, targets, Number(process.env.SECONDS ?? 5), path);
  const after = stat();
  const total = m.rps * Number(process.env.SECONDS ?? 5);
  const ms = (i: number) => (((Number(after[i]) - Number(before[i])) * 10) / total).toFixed(3);
  console.log(`${which}: ${m.rps.toFixed(0)} req/s, user ${ms(11)} ms, sys ${ms(12)} ms per request, p50 ${m.p50}, rss ${m.peakRssMb.toFixed(0)}, non2xx ${m.non2xx}`);
}
await stop(server.child);
