// D210: a recipient's hand-off mark is a HOT update. Recipients keep half of each page free (fillfactor 50,
// migration 0032): the claim's new versions stay in their page, and once the claim has committed its old versions
// are pruned there, so the mark (no indexed column) is written in place, without an entry in any of the recipient's
// indexes. Runs on both engines.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { broadcastMoves } from '../../../src/modules/broadcasts/broadcasts.repo.ts';
import { claimRecipients } from '../../../src/modules/recipients/recipient-claim.ts';
import { startHandoffs } from '../../../src/modules/recipients/recipient-handoffs.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { phones, recipientsFor, sender } from '../../helpers/sends.ts';
import { updatesWithin } from '../../helpers/table-updates.ts';
import { waitUntil } from '../../helpers/wait.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

/** Sends 64 recipients, claims them, and counts how many of their hand-off marks were HOT. */
async function markOneBatch(token: string) {
  const { key, template } = await sender(h, { balance: 1000 });
  const sent = await h.api('POST', `/v1/templates/${template.id}/send`, {
    key,
    body: { recipients: recipientsFor(phones(64)) },
  });
  expect(sent.status).toBe(202);
  const claimed = await claimRecipients(h.database.db, {
    moves: broadcastMoves,
    limit: 64,
    leaseMs: 60_000,
    token,
    perNumberPerSecond: null,
  });
  expect(claimed).toHaveLength(64);
  // The claim's old versions can be pruned only once no transaction of the server may still see them. Of the whole
  // server, not this database alone: a statement prunes a page on access only when the claim's xid is older than
  // its snapshot's xmin, the oldest transaction running in any database (PostgreSQL's GlobalVis "definitely needed"
  // bound), so another test file's open transaction in its own database kept every page unpruned (4 of 64 HOT; an
  // idle transaction with an xid in the postgres database reproduces it). Its snapshot may be gone (an idle
  // transaction has an xid but no xmin): both are waited for. PGlite has no other session.
  const claimXid = (
    await sql<{ xid: string }>`select xmin::text as xid from broadcast_recipients
    where lease_token = ${token} limit 1`.execute(h.database.db)
  ).rows[0]?.xid as string;
  // Up to 15 s; a transaction that outlives it only costs this batch its pruning (the attempts below allow for it).
  await waitUntil(
    async () => {
      const older = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
      where pid <> pg_backend_pid()
        and ((backend_xmin is not null and age(backend_xmin) >= age(${claimXid}::xid))
          or (backend_xid is not null and age(backend_xid) >= age(${claimXid}::xid)))`.execute(h.database.db);
      return (older.rows[0]?.n ?? 0) === 0;
    },
    { intervalMs: 50, timeoutMs: 15_000, message: 'no transaction older than the claim' },
  ).catch(() => undefined);
  // The transaction's own counts, read before and after the mark.
  return updatesWithin(h.database.db, 'broadcast_recipients', async (trx) => {
    expect(await startHandoffs(trx, claimed)).toHaveLength(64);
  });
}

describe("a recipient's hand-off mark (D210)", () => {
  // On Citus the rows live in the workers' shards: the coordinator's counts of the table see none of the updates.
  it.skipIf(Boolean(process.env.TEST_CITUS_WORKERS))('is a HOT update for most of a claimed batch', async () => {
    // A page can still miss its pruning now and then (another session pinning it at the moment of the mark, or a
    // transaction that outlived the wait for older transactions): the batch is tried again, up to three times, each
    // after that wait of its own. With full pages (fillfactor 100) no attempt gets near: 5 of 64 were HOT.
    const attempts: { updated: number; hot: number }[] = [];
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const counts = await markOneBatch(`hot-test-${attempt}`);
      attempts.push(counts);
      expect(counts.updated).toBe(64);
      if (counts.hot >= 48) break;
    }
    expect(Math.max(...attempts.map((counts) => counts.hot)), JSON.stringify(attempts)).toBeGreaterThanOrEqual(48);
  });
});
