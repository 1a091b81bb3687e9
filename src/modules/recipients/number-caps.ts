// The per-number cap of the claim (`perNumberPerSecond`): per-second windows per number (`channel_send_windows`),
// each taken under its row's lock, in key order.
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { groupByInKeyOrder } from '../../lib/group-by.ts';

/** Of the rows (in queue order), those their number's cap lets through in this second. */
export async function applyChannelCaps<Row extends { org_id: string; channel_id: string }>(
  trx: Transaction<DB>,
  rows: Row[],
  cap: number | null,
): Promise<Row[]> {
  if (cap === null || rows.length === 0) return rows;
  const { window } = await sql<{ window: number }>`select floor(extract(epoch from now()))::bigint as window`
    .execute(trx)
    .then((result) => result.rows[0] as { window: number });
  const taken: Row[] = [];
  for (const group of groupByInKeyOrder(rows, (row) => `${row.org_id}\u0000${row.channel_id}`).values()) {
    const { org_id, channel_id } = group[0] as Row;
    await trx
      .insertInto('channel_send_windows')
      .values({ org_id, channel_id, window_start: Number(window), count: 0 })
      .onConflict((conflict) => conflict.doNothing())
      .execute();
    const current = await trx
      .selectFrom('channel_send_windows')
      .select('count')
      .where('org_id', '=', org_id)
      .where('channel_id', '=', channel_id)
      .where('window_start', '=', Number(window))
      .forUpdate()
      .executeTakeFirstOrThrow();
    const allowed = Math.max(0, Math.min(group.length, cap - current.count));
    if (allowed === 0) continue;
    await trx
      .updateTable('channel_send_windows')
      .set({ count: sql`count + ${allowed}` })
      .where('org_id', '=', org_id)
      .where('channel_id', '=', channel_id)
      .where('window_start', '=', Number(window))
      .execute();
    taken.push(...group.slice(0, allowed));
  }
  return taken;
}

/** Per-second windows of the per-number cap are only read within their second: older ones go. */
export async function purgeSendWindows(db: Kysely<DB>, nowSeconds: number): Promise<void> {
  await db
    .deleteFrom('channel_send_windows')
    .where('window_start', '<', nowSeconds - 60)
    .execute();
}
