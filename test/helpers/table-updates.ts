// How many rows of one table a piece of work updated, and how many of those updates were HOT (written in their
// page, without new index entries), counted in one transaction from its own statistics (pg_stat_xact_user_tables):
// read before and after the work, since a backend's counters also hold its earlier transactions until it reports
// them.
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../src/db/schema.ts';

export async function updatesWithin(
  db: Kysely<DB>,
  table: string,
  work: (trx: Transaction<DB>) => Promise<unknown>,
): Promise<{ updated: number; hot: number }> {
  return db.transaction().execute(async (trx) => {
    const read = async () =>
      (
        await sql<{ updated: number; hot: number }>`select n_tup_upd::int as updated, n_tup_hot_upd::int as hot
          from pg_stat_xact_user_tables where relname = ${table}`.execute(trx)
      ).rows[0] ?? { updated: 0, hot: 0 };
    const before = await read();
    await work(trx);
    const after = await read();
    return { updated: after.updated - before.updated, hot: after.hot - before.hot };
  });
}
