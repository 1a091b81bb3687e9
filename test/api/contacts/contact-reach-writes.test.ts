// D206: what a hand-off writes on its contact. The agent's reach (messaging_status, last_contacted_at) keeps the
// contact's `updated_at` and records no `contact.updated`, and, in the room contacts keep in their pages
// (fillfactor, migration 0030), the write is HOT: no entry in any of the contact's indexes. Runs on both engines.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reachabilityUpdate } from '../../../src/modules/contacts/contact-intake.ts';
import { onCitus } from '../../helpers/database.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { phones, recipientsFor, sender } from '../../helpers/sends.ts';
import { updatesWithin } from '../../helpers/table-updates.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

describe("a hand-off's write on its contact (D206)", () => {
  it('makes the contact verified and contacted, and keeps its updated_at', async () => {
    const { key, template } = await sender(h, { balance: 100 });
    const list = phones(3);
    const created = await Promise.all(
      list.map((phone) => h.api('POST', '/v1/contacts', { key, body: { phone, first_name: 'Ana' } })),
    );
    const before = created.map((response) => response.body as { id: string; updated_at: string });
    expect(before.map((contact) => contact.id)).toHaveLength(3);
    const response = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: recipientsFor(list) },
    });
    expect(response.status).toBe(202);
    expect(await h.fanout.drain()).toBe(3);
    for (const contact of before) {
      const read = await h.api('GET', `/v1/contacts/${contact.id}`, { key });
      expect(read.body.messaging_status).toBe('verified');
      expect(read.body.last_contacted_at).not.toBeNull();
      expect(read.body.updated_at).toBe(contact.updated_at);
    }
  });

  // Reads the transaction's row counts in pg_stat of one PostgreSQL. On Citus the rows are updated in a worker's
  // shard and the coordinator counts none (D347).
  it.skipIf(onCitus)('is a HOT update for most of a group of contacts that fill their page', async () => {
    const { org } = await sender(h, { balance: 100 });
    // 200 contacts written together, as an import or an audience leaves them: side by side, filling their pages.
    // Sixteen in the middle (the fan-out's group) are reached in one statement.
    await sql`insert into contacts (org_id, id, phone, first_name, last_name, email, city, messaging_status)
      select ${org.id}, 'ct_reach' || i, '+1555' || (2000000 + i), 'Maria Fernanda', 'de Oliveira Santos',
        'maria.fernanda' || i || '@example.com', 'Rio de Janeiro', 'unverified'
      from generate_series(1, 200) as i`.execute(h.database.db);
    const ids = Array.from({ length: 16 }, (_, i) => `ct_reach${100 + i}`);
    const update = reachabilityUpdate(
      org.id,
      ids.map((contactId) => ({ contactId, outcome: 'reached' as const })),
      { contactedAt: new Date() },
    );
    if (!update) throw new Error('nothing to update');
    // The transaction's own counts (read before and after the update).
    const counts = await updatesWithin(h.database.db, 'contacts', (trx) => update.execute(trx));
    expect(counts.updated).toBe(16);
    // Full pages (fillfactor 100) left no room: none was HOT, nor any while the write moved `updated_at` (an indexed
    // column). The room of fillfactor 70 holds about two thirds of a page's rows again (11 of these 16).
    expect(counts.hot).toBeGreaterThanOrEqual(8);
  });
});
