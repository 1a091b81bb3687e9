// Plans that must not depend on when a connection first made them (D201, D202). A plan cached while a table was
// known to be empty (analyzed with no rows) read the table whole for the rest of the connection's life as it grew:
// a foreign key's check, a trigger's statement. Runs on both engines.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../src/db/migrate.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
let orgId: string;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
  orgId = (await h.createOrg()).org.id;
});
afterAll(() => h.close());

const reltuples = async (table: string) =>
  Number(
    (
      await sql<{ n: number }>`select reltuples::float8 as n from pg_class where oid = ${table}::regclass`.execute(
        h.database.db,
      )
    ).rows[0]?.n,
  );

describe('statistics (D202)', () => {
  it('are gathered for the tables that hold rows, and an empty table stays never analyzed', async () => {
    // Migrations ran on an empty database: nothing was analyzed empty.
    expect(await reltuples('conversations')).toBe(-1);
    await analyze(h.database.db);
    expect(await reltuples('organizations')).toBeGreaterThanOrEqual(1);
    expect(await reltuples('conversations')).toBe(-1);
    expect(await reltuples('contact_sort_versions')).toBe(-1);
  });
});

describe("a contact's sort-version trigger (D201)", () => {
  it('plans its statements at each call, not once for the connection while its table was small', async () => {
    await sql`insert into contacts (org_id, id, first_name, messaging_status)
      select ${orgId}, 'ct_plan' || i, 'c' || i, 'unavailable' from generate_series(1, 30) as i`.execute(h.database.db);
    const buffers = await h.database.db.transaction().execute(async (trx) => {
      // Known to be empty, as an ANALYZE of an empty table leaves it: a plan made now would scan it.
      await sql`analyze contact_sort_versions`.execute(trx);
      // More than five calls in one session: PostgreSQL's plan cache settles on a generic plan after five.
      for (let i = 1; i <= 8; i++) {
        await sql`update contacts set updated_at = now() + ${i} * interval '1 second'
          where org_id = ${orgId} and id = ${`ct_plan${i}`}`.execute(trx);
      }
      // The table grows well past what that plan was made for (versions of other contacts, kept 24 hours).
      await sql`insert into contact_sort_versions (org_id, contact_id, version_xid, replaced_xid, replaced_at,
          updated_at, name_sort, origin)
        select ${orgId}, 'ct_other' || i, '1'::xid8, '2'::xid8, now(), now(), 'x', 'API'
        from generate_series(1, 20000) as i`.execute(trx);
      const plan = await sql<{ 'QUERY PLAN': string }>`explain (analyze, buffers, format json)
        update contacts set updated_at = now() + interval '1 minute' where org_id = ${orgId} and id = 'ct_plan20'`.execute(
        trx,
      );
      const [{ Plan: root }] = plan.rows[0]?.['QUERY PLAN'] as unknown as [{ Plan: Record<string, number> }];
      return Number(root['Shared Hit Blocks']) + Number(root['Shared Read Blocks']);
    });
    // Probes by the versions' key read a handful of pages; the scan of 20,000 versions read well over a hundred.
    expect(buffers).toBeLessThan(60);
  });
});
