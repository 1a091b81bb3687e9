// D316: the migrations leave every tenant table distributed by org_id (co-located with organizations) and the
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
  it('has no tenant table left local on Citus, and every other table is placed as D316 says', async () => {
    const db = test.database.db;
    expect(await localTenantTables(db)).toEqual([]);
    if (!(await hasCitus(db))) return;
    const { rows } = await sql<{ table: string; method: string; colocated: boolean }>`
      select p.logicalrelid::regclass::text as table, p.partmethod as method,
        p.colocationid = (select colocationid from pg_dist_partition
          where logicalrelid = 'organizations'::regclass) as colocated
      from pg_dist_partition p order by 1`.execute(db);
    const placed = new Map(rows.map((row) => [row.table, row]));
    for (const table of REFERENCE_TABLES) expect(placed.get(table)?.method).toBe('n');
    const { rows: tables } = await sql<{ table: string }>`select relname as table from pg_class
      where relnamespace = current_schema()::regnamespace and relkind in ('r', 'p') order by 1`.execute(db);
    for (const { table } of tables) {
      if (LOCAL_TABLES.includes(table) || REFERENCE_TABLES.includes(table)) continue;
      expect({ table, ...placed.get(table) }).toMatchObject({ table, method: 'h', colocated: true });
    }
  });
});
