// The organization `npm run bench:audience` seeded (its database is kept), and a new audience broadcast of all its
// contacts started on it by the worker's own step (which adds its first chunk): what bench/explain-chunk.ts and
// bench/audience-floor.ts time their chunks on. `beforeStart` runs once the organization is found, before the
// broadcast is accepted; `finish()` cancels the broadcast and closes the app.
import { sql } from 'kysely';
import { buildApp } from '../src/app.ts';
import type { Database } from '../src/db/database.ts';
import { wire } from '../src/wiring.ts';
import { poster, unlimited } from './bench-database.ts';

const ADMIN = 'bench-admin';

type Seeded = { org_id: string; template_id: string; account_id: string; channel_id: string };

export async function startSeededAudience(database: Database, beforeStart?: (seeded: Seeded) => Promise<void>) {
  const { db } = database;
  const seeded = (
    await sql<Seeded>`
      select t.org_id, t.id as template_id, a.id as account_id, n.id as channel_id
      from templates t join messaging_accounts a on a.org_id = t.org_id
        join channels n on n.org_id = a.org_id and n.account_id = a.id
      where t.name = 'bench_audience' order by t.created_at desc limit 1`.execute(db)
  ).rows[0];
  if (!seeded) throw new Error('run `npm run bench:audience` first: its organization is not in this database');
  await beforeStart?.(seeded);
  const wiring = wire({ database, rateLimitStore: unlimited, adminToken: ADMIN, fanout: { perNumberPerSecond: null } });
  const app = await buildApp(wiring);
  const call = poster(app);
  const { key } = await call(`/admin/v1/organizations/${seeded.org_id}/api-keys`, {}, ADMIN);
  const created = await call(
    '/v1/broadcasts',
    { template_id: seeded.template_id, audience: {}, variables: { 'body.offer': '20%' } },
    key,
  );
  await wiring.audiences.runOnce(); // starts it (and adds its first chunk)
  return {
    ...seeded,
    broadcastId: created.id as string,
    async finish() {
      await sql`update broadcasts set stored_status = 'cancelled'
        where org_id = ${seeded.org_id} and id = ${created.id}`.execute(db);
      await app.close();
    },
  };
}
