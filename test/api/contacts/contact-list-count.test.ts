// total_count on the contact list (decisions §2): exact up to 10,000 matches, null above, exact always with
// include_total=true. The organization is seeded with 10,001 contacts by one SQL insert, not 10,001 API calls.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
let key: string;
let orgId: string;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
  const created = await h.createOrg();
  key = created.key;
  orgId = created.org.id;
  // 10,001 contacts: 10,000 in MX, the last one in US; one in ten is called "tenth".
  await sql`insert into contacts (org_id, id, first_name, country, messaging_status)
    select ${orgId}, 'ct_count' || lpad(i::text, 6, '0'), case when i % 10 = 0 then 'tenth' else 'c' || i end,
      case when i <= 10000 then 'MX' else 'US' end, 'unavailable'
    from generate_series(1, 10001) as i`.execute(h.database.db);
  await sql`analyze contacts`.execute(h.database.db);
});
afterAll(() => h.close());

const list = (query: string) => h.api('GET', `/v1/contacts?${query}`, { key });

describe('total_count', () => {
  it('is exact when the filter matches fewer than 10,000 contacts', async () => {
    const tenth = await list('q=tenth&limit=5');
    expect(tenth.status).toBe(200);
    expect(tenth.body.total_count).toBe(1000);
    const us = await list('country=US');
    expect(us.body.total_count).toBe(1);
    expect(us.body.items).toHaveLength(1);
    expect((await list('country=AR')).body.total_count).toBe(0);
  });

  it('is exact at exactly 10,000 matches', async () => {
    const mx = await list('country=MX&limit=1');
    expect(mx.status).toBe(200);
    expect(mx.body.total_count).toBe(10_000);
    // Later pages of the same walk follow the same rule.
    const next = await list(`country=MX&limit=1&cursor=${mx.body.next_cursor}`);
    expect(next.body.total_count).toBe(10_000);
  });

  it('is null at 10,001 matches and above, and exact with include_total=true', async () => {
    const all = await list('limit=2');
    expect(all.status).toBe(200);
    expect(all.body).toHaveProperty('total_count', null);
    expect(all.body.items).toHaveLength(2);
    const both = await list('country=MX&country=US');
    expect(both.body.total_count).toBeNull();
    expect((await list('include_total=true&limit=2')).body.total_count).toBe(10_001);
    expect((await list('country=MX&country=US&include_total=true')).body.total_count).toBe(10_001);
    expect((await list('country=MX&include_total=true')).body.total_count).toBe(10_000);
    expect((await list('include_total=false')).body.total_count).toBeNull();
  });

  it('stops counting deleted contacts: one deletion brings 10,001 back to an exact 10,000', async () => {
    const { org, key: other } = await h.createOrg();
    await sql`insert into contacts (org_id, id, messaging_status)
      select ${org.id}, 'ct_del' || lpad(i::text, 6, '0'), 'unavailable' from generate_series(1, 10001) as i`.execute(
      h.database.db,
    );
    expect((await h.api('GET', '/v1/contacts?limit=1', { key: other })).body.total_count).toBeNull();
    expect((await h.api('DELETE', '/v1/contacts/ct_del000001', { key: other })).status).toBe(204);
    expect((await h.api('GET', '/v1/contacts?limit=1', { key: other })).body.total_count).toBe(10_000);
  });

  it('counts one property condition exactly up to 10,000, and pages it in sort order either way', async () => {
    const { org, key: other } = await h.createOrg();
    const property = await h.api('POST', '/v1/properties', {
      key: other,
      body: { key: 'score', label: 'Score', kind: 'NUMBER' },
    });
    expect(property.status).toBe(201);
    // Contact i has score i and the name n<10001 - i>, so name order is the reverse of score order.
    await sql`insert into contacts (org_id, id, first_name, messaging_status)
      select ${org.id}, 'ct_score' || lpad(i::text, 6, '0'), 'n' || lpad((10001 - i)::text, 6, '0'), 'unavailable'
      from generate_series(1, 10001) as i`.execute(h.database.db);
    await sql`insert into contact_property_values (org_id, contact_id, property_id, value_number)
      select ${org.id}, 'ct_score' || lpad(i::text, 6, '0'), ${property.body.id}, i
      from generate_series(1, 10001) as i`.execute(h.database.db);
    await sql`analyze contact_property_values`.execute(h.database.db);
    const get = (query: string) => h.api('GET', `/v1/contacts?${query}`, { key: other });
    expect((await get('property_filter=score:gte:1')).body.total_count).toBeNull();
    expect((await get('property_filter=score:gte:1&include_total=true')).body.total_count).toBe(10_001);
    expect((await get('property_filter=score:gte:2')).body.total_count).toBe(10_000);
    expect((await get('property_filter=score:exists:true')).body.total_count).toBeNull();
    // Few matches (read into a hash) and many (probed per contact) page the same way: by name, with cursors.
    for (const [filter, expected] of [
      ['score:gt:9950', 51],
      ['score:gte:1', 10_001],
    ] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await get(`sort=name&limit=200&property_filter=${filter}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.status).toBe(200);
        seen.push(...page.body.items.map((item: { first_name: string }) => item.first_name));
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(seen).toHaveLength(expected);
      expect(seen).toEqual([...seen].sort());
      expect(seen[0]).toBe('n000000');
    }
    // A contact deleted by any writer loses its values (trigger), so it leaves the count at once.
    await sql`update contacts set deleted_at = now() where org_id = ${org.id} and id = 'ct_score010001'`.execute(
      h.database.db,
    );
    expect((await get('property_filter=score:gte:1')).body.total_count).toBe(10_000);
    expect((await get('property_filter=score:gt:9950')).body.total_count).toBe(50);
  });

  it('matches a text value by its whole value, whether shorter or longer than the indexed 200 characters', async () => {
    const { key: other } = await h.createOrg();
    const body = { key: 'note', label: 'Note', kind: 'TEXTAREA' };
    expect((await h.api('POST', '/v1/properties', { key: other, body })).status).toBe(201);
    const long = `${'y'.repeat(200)}tail`;
    for (const value of [long, 'y'.repeat(200), 'y'.repeat(199), 'short']) {
      const created = await h.api('POST', '/v1/contacts', {
        key: other,
        body: { properties: { note: { kind: 'TEXTAREA', value_text: value } } },
      });
      expect(created.status).toBe(201);
    }
    const count = async (value: string) =>
      (await h.api('GET', `/v1/contacts?property_filter=note:eq:${value}`, { key: other })).body.total_count;
    expect(await count(long)).toBe(1);
    expect(await count('y'.repeat(200))).toBe(1);
    expect(await count('y'.repeat(199))).toBe(1);
    expect(await count('short')).toBe(1);
    expect(await count('shor')).toBe(0);
    expect(await count(`${'y'.repeat(200)}other`)).toBe(0);
  });

  it('takes include_total as a boolean: anything else is a 422 on ["query","include_total"]', async () => {
    const response = await list('include_total=maybe');
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['query', 'include_total']);
  });

  it('is documented in the OpenAPI document', async () => {
    const spec = await h.api('GET', '/v1/openapi.json', { key });
    const parameters = spec.body.paths['/v1/contacts'].get.parameters as { name: string; schema: unknown }[];
    expect(parameters.find((parameter) => parameter.name === 'include_total')?.schema).toMatchObject({
      type: 'boolean',
    });
  });
});
