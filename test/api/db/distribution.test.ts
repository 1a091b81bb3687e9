// D316, D347: the migrations leave every tenant table distributed by org_id (co-located with organizations) and the
// global lookups in reference tables on a Citus database; elsewhere they distribute nothing.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasCitus, LOCAL_TABLES, localTenantTables, REFERENCE_TABLES } from '../../../src/db/citus.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let test: TestDatabase;
beforeAll(async () => {
  test = await createTestDatabase();
});
afterAll(() => test?.drop());

describe('the schema after the migrations', () => {
  it('has no tenant table left local on Citus: each is distributed by org_id or a reference table (D316, D347)', async () => {
    const db = test.database.db;
    expect(await localTenantTables(db)).toEqual([]);
    // Runs in CI: the citus project is part of `npm test`, and .ci/run requires the cluster (D347).
    if (!(await hasCitus(db))) return;
    const { rows } = await sql<{ table: string; method: string; column: string | null; colocated: boolean }>`
      select p.logicalrelid::regclass::text as table, p.partmethod as method,
        case when p.partmethod = 'h' then column_to_column_name(p.logicalrelid, p.partkey) end as column,
        p.colocationid = (select colocationid from pg_dist_partition
          where logicalrelid = 'organizations'::regclass) as colocated
      from pg_dist_partition p order by 1`.execute(db);
    const placed = new Map(rows.map((row) => [row.table, row]));
    const { rows: tables } = await sql<{ table: string; has_org: boolean }>`select c.relname as table,
        exists (select from pg_attribute a where a.attrelid = c.oid and a.attname = 'org_id' and not a.attisdropped)
          as has_org
      from pg_class c where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p')
        and not c.relispartition order by 1`.execute(db);
    expect(tables.length).toBeGreaterThan(30);
    for (const { table, has_org } of tables) {
      const where = { table, ...placed.get(table) };
      if (REFERENCE_TABLES.includes(table)) expect(where).toMatchObject({ table, method: 'n' });
      else if (table === 'organizations') expect(where).toMatchObject({ table, method: 'h', column: 'id' });
      else if (LOCAL_TABLES.includes(table)) {
        // Bookkeeping and the sign-in throttle by email: no organization in them, kept on the coordinator.
        expect({ table, has_org, placed: placed.has(table) }).toEqual({ table, has_org: false, placed: false });
      } else expect(where).toMatchObject({ table, method: 'h', column: 'org_id', colocated: true });
    }
  });
});
