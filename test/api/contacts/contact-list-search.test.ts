// q at scale (D40, D142): a q with trigrams is counted through its trigrams one by one, then paged from its matches
// when they are few (at most 1,000: read and sorted; at most 10,000: hashed and probed along the sort index) and
// along the sort index otherwise. Every path lists exactly what the LIKE of decisions §2 lists, in sort order.
// And a list costs one statement: its page, the page's contacts and their property values, and its count (which
// picks how the page reads the condition), plus the property definitions when property_filter is given.
// The organization is seeded by one SQL insert (10,500 contacts), not 10,500 API calls.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/lib/clock.ts';
import type { ContactListQuery } from '../../../src/modules/contacts/contacts.schemas.ts';
import { createContactsService } from '../../../src/modules/contacts/contacts.service.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { statementCounter } from '../../helpers/statement-counter.ts';

const CONTACTS = 10_500;
let h: Harness;
let key: string;
let orgId: string;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
  const created = await h.createOrg();
  key = created.key;
  orgId = created.org.id;
  // Every contact is "Common"; one in seven (1,500) is "Middle"; contacts 1000..1006 are "Rare" (7). Emails are
  // u<i>@Mail<i % 3>.Test; one in eleven has no first name (names sort last).
  await sql`insert into contacts (org_id, id, first_name, last_name, email, updated_at, messaging_status)
    select ${orgId}, 'ct_search' || lpad(i::text, 6, '0'),
      case when i % 11 = 0 then null else 'N' || (i * 7919 % 10007) end,
      case when i between 1000 and 1006 then 'Rare' when i % 7 = 0 then 'Middle Common' else 'Common' end,
      'u' || i || '@Mail' || (i % 3) || '.Test', now() - (i % 500) * interval '1 minute', 'unavailable'
    from generate_series(1, ${CONTACTS}) as i`.execute(h.database.db);
  await sql`analyze contacts`.execute(h.database.db);
});
afterAll(() => h.close());

const list = (query: string) => h.api('GET', `/v1/contacts?${query}`, { key });

/** The ids of the whole list (or its first `pages` pages), walked 200 at a time. */
async function walk(query: string, pages = Number.POSITIVE_INFINITY): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < pages; page++) {
    const response = await list(`${query}&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(response.status, response.text).toBe(200);
    ids.push(...response.body.items.map((item: { id: string }) => item.id));
    cursor = response.body.next_cursor;
    if (!cursor) break;
  }
  return ids;
}

/** The same list by the contract's definition: the LIKE over search_text, in the sort's order (nulls last). */
async function expected(q: string, order: 'name asc' | 'name desc' | 'recent desc', max = CONTACTS) {
  const by = {
    'name asc': sql`name_sort is null, name_sort asc, id asc`,
    'name desc': sql`name_sort is null, name_sort desc, id desc`,
    'recent desc': sql`updated_at desc, id desc`,
  }[order];
  const rows = await sql<{ id: string }>`select id from contacts
    where org_id = ${orgId} and deleted_at is null and search_text like ${`%${q.toLowerCase()}%`}
    order by ${by} limit ${max}`.execute(h.database.db);
  return rows.rows.map((row) => row.id);
}

describe('q through its trigrams', () => {
  it('lists exactly the LIKE matches, in order, whether they are few, hundreds, thousands or most contacts', async () => {
    const cases: [string, number][] = [
      // q and the pages to walk (200 contacts each): 7, 1, 350 (read and sorted), 1,499 (hashed), 10,500 matches
      ['rare', 1],
      ['U1000@mail1', 1],
      ['0@mail2.te', 2],
      ['middle co', 8],
      ['common', 3],
    ];
    for (const [q, pages] of cases) {
      const first = await list(`q=${encodeURIComponent(q)}&limit=1`);
      const matches = (await expected(q, 'recent desc')).length;
      expect(first.body.total_count, q).toBe(matches > 10_000 ? null : matches);
      for (const order of ['name asc', 'name desc', 'recent desc'] as const) {
        const [sort, dir] = order.split(' ');
        const got = await walk(`q=${encodeURIComponent(q)}&sort=${sort}&sort_dir=${dir}`, pages);
        expect(got, `${q}, ${order}`).toEqual(await expected(q, order, pages * 200));
      }
    }
    expect((await list('q=common&include_total=true&limit=1')).body.total_count).toBe(CONTACTS - 7);
  });

  it('keeps the literal substring: wildcards, windows without three ASCII letters or digits, no match', async () => {
    expect((await list(`q=${encodeURIComponent('u1000%')}`)).body.items).toEqual([]);
    expect((await list(`q=${encodeURIComponent('u1_00')}`)).body.items).toEqual([]);
    expect((await list(`q=${encodeURIComponent(' RARE')}`)).body.total_count).toBe(7);
    // No window of three ASCII letters or digits: the LIKE alone.
    expect((await list(`q=${encodeURIComponent('0@')}`)).body.total_count).toBe(1050);
    expect((await list(`q=${encodeURIComponent('@')}&include_total=true&limit=1`)).body.total_count).toBe(CONTACTS);
    expect((await list('q=zzzz')).body).toMatchObject({ items: [], total_count: 0, next_cursor: null });
    // Trigrams present, substring absent: every trigram of "mon middle" is in "Middle Common", the text is not.
    expect((await list(`q=${encodeURIComponent('mon middle')}`)).body.total_count).toBe(0);
  });
});

describe('statements per list', () => {
  it('is one statement, and one more for the definitions of property_filter', async () => {
    const counter = statementCounter();
    const service = createContactsService({ db: h.database.db.withPlugin(counter.plugin), clock: systemClock });
    const run = async (query: Partial<ContactListQuery>, items = query.q === 'rare' ? 7 : 50) => {
      const before = counter.count;
      const listQuery: ContactListQuery = { limit: 50, ...query };
      const page = await service.list(orgId, 'UTC', listQuery);
      expect(page.items).toHaveLength(items);
      if (items > 0) expect(page.items[0]?.email).toMatch(/@mail\d\.test$/i);
      return counter.count - before;
    };
    expect(await run({})).toBe(1);
    expect(await run({ sort: 'name' })).toBe(1);
    expect(await run({ include_total: true })).toBe(1);
    const first = await service.list(orgId, 'UTC', { limit: 50 });
    expect(await run({ cursor: first.next_cursor as string })).toBe(1);
    expect(await run({ q: 'rare' })).toBe(1);
    expect(await run({ q: 'common' })).toBe(1);
    expect(await run({ q: 'common', sort: 'name', sort_dir: 'desc', include_total: true })).toBe(1);
    const property = await h.api('POST', '/v1/properties', {
      key,
      body: { key: 'score', label: 'Score', kind: 'NUMBER' },
    });
    expect(property.status, property.text).toBe(201);
    expect(await run({ property_filter: 'score:gte:1' }, 0)).toBe(2);
  });
});
