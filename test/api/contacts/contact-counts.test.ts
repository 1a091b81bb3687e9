// The unfiltered list's total_count comes from contact_counts, kept by triggers on contacts (migration 0013): it
// must equal the organization's live contacts after every kind of write, concurrent ones included.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

async function live(orgId: string): Promise<number> {
  const result = await sql<{ n: number }>`select count(*)::int as n from contacts
    where org_id = ${orgId} and deleted_at is null`.execute(h.database.db);
  return result.rows[0]?.n ?? 0;
}

async function total(key: string, extra = ''): Promise<number | null> {
  const response = await h.api('GET', `/v1/contacts?limit=1${extra}`, { key });
  expect(response.status, response.text).toBe(200);
  return response.body.total_count;
}

describe('the unfiltered total_count', () => {
  it('follows creates, batch upserts, deletes, SQL inserts and hard deletes, concurrent ones included', async () => {
    const { org, key } = await h.createOrg();
    const other = await h.createOrg();
    await h.api('POST', '/v1/contacts', { key: other.key, body: { first_name: 'elsewhere' } });
    const created = await Promise.all(
      Array.from({ length: 12 }, (_, i) => h.api('POST', '/v1/contacts', { key, body: { first_name: `c${i}` } })),
    );
    for (const response of created) expect(response.status, response.text).toBe(201);
    expect(await total(key)).toBe(12);
    const batch = await h.api('POST', '/v1/contacts/batch-upsert', {
      key,
      body: {
        match_on: 'email',
        items: [
          { email: 'a@batch.test', first_name: 'a' },
          { email: 'b@batch.test', first_name: 'b' },
        ],
      },
    });
    expect(batch.status, batch.text).toBe(200);
    // Concurrent deletes (one of them twice) and creates.
    const ids = created.map((response) => response.body.id as string);
    await Promise.all([
      ...ids.slice(0, 5).map((id) => h.api('DELETE', `/v1/contacts/${id}`, { key })),
      h.api('DELETE', `/v1/contacts/${ids[0]}`, { key }),
      ...Array.from({ length: 3 }, (_, i) => h.api('POST', '/v1/contacts', { key, body: { first_name: `d${i}` } })),
    ]);
    expect(await total(key)).toBe(await live(org.id));
    expect(await total(key)).toBe(12 + 2 - 5 + 3);
    // Other writers: SQL inserts (one statement, many rows) and hard deletes.
    await sql`insert into contacts (org_id, id, first_name, messaging_status)
      select ${org.id}, 'ct_counted' || i, 'sql', 'unavailable' from generate_series(1, 30) as i`.execute(
      h.database.db,
    );
    await sql`delete from contacts where org_id = ${org.id} and id in ('ct_counted1', 'ct_counted2')`.execute(
      h.database.db,
    );
    expect(await total(key)).toBe(await live(org.id));
    expect(await total(key, '&include_total=true')).toBe(12 + 2 - 5 + 3 + 28);
    expect(await total(other.key)).toBe(1);
  });
});
