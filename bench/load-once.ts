// Scratch: load an already running API on BASE with the bench's targets (keys made through the admin API).
import pg from 'pg';
import { load, type Target } from './read-load.ts';
const base = process.env.BASE as string; const pid = Number(process.env.PID);
const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/crm_bench_reads' });
await c.connect();
const orgs = (await c.query('select o.id as org, min(c.id) as contact from organizations o join contacts c on c.org_id = o.id group by o.id limit 300')).rows;
await c.end();
const targets: Target[] = [];
for (const row of orgs) {
  const r = await fetch(`${base}/admin/v1/organizations/${row.org}/api-keys`, { method: 'POST', headers: { authorization: 'Bearer x', 'content-type': 'application/json' }, body: JSON.stringify({ name: 'p' }) });
  targets.push({ orgId: row.org, key: ((await r.json()) as { key: string }).key, contactId: row.contact });
}
for (let i = 0; i < Number(process.env.ROUNDS ?? 4); i++) {
  const m = await load('api', { base, pid, child: undefined as never }, targets, 5, (t) => `/v1/contacts/${t.contactId}`);
  const metrics = await (await fetch(`${base}/metrics`)).text();
  const heap = /nodejs_heap_size_used_bytes (\d+)/.exec(metrics)?.[1];
  const old = /nodejs_heap_space_size_used_bytes\{space="old"\} (\d+)/.exec(metrics)?.[1];
  const ext = /nodejs_external_memory_bytes (\d+)/.exec(metrics)?.[1];
  console.log(`${m.rps.toFixed(0)} req/s cpu ${m.cpuMsPerRequest.toFixed(2)} ms, peak rss ${m.peakRssMb.toFixed(0)}, heap used ${(Number(heap) / 1e6).toFixed(0)} MB, old ${(Number(old) / 1e6).toFixed(0)}, external ${(Number(ext) / 1e6).toFixed(0)}`);
}
