// The contact list: limit, cursors, total_count, q, every filter, property_filter and every sort (contract:
// GET /v1/contacts; decisions §2).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { waitUntil } from '../../helpers/wait.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

const list = (key: string, query = '') => h.api('GET', `/v1/contacts${query ? `?${query}` : ''}`, { key });
const names = (response: { body: { items: { first_name: string }[] } }) =>
  response.body.items.map((item) => item.first_name);

async function walk(key: string, query: string): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const response = await list(key, `${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(response.status).toBe(200);
    seen.push(...names(response));
    cursor = response.body.next_cursor;
  } while (cursor);
  return seen;
}

describe('limit and cursors', () => {
  it('default to 50, accept 1 to 200, and walk with next_cursor to a null cursor', async () => {
    const { key } = await h.createOrg();
    for (let i = 0; i < 55; i++) await h.api('POST', '/v1/contacts', { key, body: { first_name: `c${i}` } });
    const first = await list(key);
    expect(first.body.items).toHaveLength(50);
    expect(first.body.total_count).toBe(55);
    expect(typeof first.body.next_cursor).toBe('string');
    const second = await list(key, `cursor=${first.body.next_cursor}`);
    expect(second.body.items).toHaveLength(5);
    expect(second.body.next_cursor).toBeNull();
    expect(second.body.total_count).toBe(55);
    for (const bad of ['0', '201', 'x']) {
      const response = await list(key, `limit=${bad}`);
      expect(response.status).toBe(422);
      expect(response.body.detail[0].loc).toEqual(['query', 'limit']);
    }
    expect((await list(key, 'limit=200')).body.items).toHaveLength(55);
    expect((await list(key, 'limit=1')).body.items).toHaveLength(1);
  });

  it('refuse a garbled cursor, or one made for another sort or filter, with a 422 at ["query","cursor"]', async () => {
    const { key } = await h.createOrg();
    for (let i = 0; i < 3; i++)
      await h.api('POST', '/v1/contacts', { key, body: { first_name: `c${i}`, country: 'MX' } });
    const page = await list(key, 'limit=1&country=MX');
    const cursor = page.body.next_cursor;
    for (const query of [
      'cursor=garbage!!',
      `cursor=${cursor}`,
      `cursor=${cursor}&country=MX&sort=name`,
      `cursor=${cursor}&country=MX&sort_dir=asc`,
      `cursor=${Buffer.from('{"f":"x","p":[]}').toString('base64url')}`,
    ]) {
      const response = await list(key, query);
      expect(response.status, query).toBe(422);
      expect(response.body.detail[0].loc).toEqual(['query', 'cursor']);
    }
    expect((await list(key, `limit=1&country=MX&cursor=${cursor}`)).status).toBe(200);
  });

  it('refuse a cursor whose snapshot was tampered with, without a 500', async () => {
    const { key } = await h.createOrg();
    for (let i = 0; i < 3; i++) await h.api('POST', '/v1/contacts', { key, body: {} });
    const page = await list(key, 'limit=1');
    const decoded = JSON.parse(Buffer.from(page.body.next_cursor, 'base64url').toString());
    decoded.p[0] = "1:0:'; drop table contacts; --";
    const forged = Buffer.from(JSON.stringify(decoded)).toString('base64url');
    const response = await list(key, `limit=1&cursor=${forged}`);
    expect(response.status).toBe(422);
  });
});

describe('sorts', () => {
  async function seed(key: string) {
    const rows = [
      { first_name: 'bruno', last_name: 'b', country: 'MX', city: 'lima', origin: undefined },
      { first_name: 'Alice', last_name: 'z', country: 'AR', city: null },
      { first_name: null, last_name: null, country: null, city: 'Bogota' },
      { first_name: 'carla', last_name: null, country: 'BR', city: null },
      { first_name: 'alice', last_name: 'a', country: 'MX', city: 'Austin' },
    ];
    const ids: string[] = [];
    for (const row of rows) {
      const response = await h.api('POST', '/v1/contacts', { key, body: row });
      ids.push(response.body.id);
      // Each contact is later than the one before (the `recent` sort): wait for the clock to move past this one.
      await waitUntil(() => Date.now() > Date.parse(response.body.updated_at), { intervalMs: 1, message: 'the clock' });
    }
    return ids;
  }

  it('recent is updated_at descending by default, ascending on request; an update moves a contact first', async () => {
    const { key } = await h.createOrg();
    const ids = await seed(key);
    expect((await list(key)).body.items.map((c: any) => c.id)).toEqual([...ids].reverse());
    expect((await list(key, 'sort=recent&sort_dir=asc')).body.items.map((c: any) => c.id)).toEqual(ids);
    await h.api('PATCH', `/v1/contacts/${ids[0]}`, { key, body: { city: 'Quito' } });
    expect((await list(key)).body.items[0].id).toBe(ids[0]);
  });

  it('name is case-insensitive ascending by default with nameless contacts last, in both directions', async () => {
    const { key } = await h.createOrg();
    await seed(key);
    const asc = (await list(key, 'sort=name')).body.items.map((c: any) => `${c.first_name} ${c.last_name}`);
    expect(asc).toEqual(['alice a', 'Alice z', 'bruno b', 'carla null', 'null null']);
    const desc = (await list(key, 'sort=name&sort_dir=desc')).body.items.map(
      (c: any) => `${c.first_name} ${c.last_name}`,
    );
    expect(desc).toEqual(['carla null', 'bruno b', 'Alice z', 'alice a', 'null null']);
  });

  it('country, city and origin put contacts lacking the value last', async () => {
    const { key } = await h.createOrg();
    await seed(key);
    const country = (await list(key, 'sort=country')).body.items.map((c: any) => c.country);
    expect(country.slice(0, 4)).toEqual(['AR', 'BR', 'MX', 'MX']);
    expect(country[4]).toBeNull();
    const countryDesc = (await list(key, 'sort=country&sort_dir=desc')).body.items.map((c: any) => c.country);
    expect(countryDesc).toEqual(['MX', 'MX', 'BR', 'AR', null]);
    const city = (await list(key, 'sort=city')).body.items.map((c: any) => c.city);
    expect(city).toEqual(['Austin', 'Bogota', 'lima', null, null]);
    const cityDesc = (await list(key, 'sort=city&sort_dir=desc')).body.items.map((c: any) => c.city);
    expect(cityDesc).toEqual(['lima', 'Bogota', 'Austin', null, null]);
    const origin = await list(key, 'sort=origin');
    expect(origin.status).toBe(200);
    expect(origin.body.items.every((c: any) => c.origin === 'API')).toBe(true);
  });

  it.each(['recent', 'name', 'country', 'city', 'origin'])(
    'a walk with page size 1 in %s order matches the whole list, both directions',
    async (sort) => {
      const { key } = await h.createOrg();
      await seed(key);
      for (const dir of ['asc', 'desc']) {
        const whole = names(await list(key, `sort=${sort}&sort_dir=${dir}&limit=200`));
        expect(await walk(key, `sort=${sort}&sort_dir=${dir}&limit=1`)).toEqual(whole);
        expect(await walk(key, `sort=${sort}&sort_dir=${dir}&limit=2`)).toEqual(whole);
      }
    },
  );

  it('refuses an unknown sort or direction', async () => {
    const { key } = await h.createOrg();
    expect((await list(key, 'sort=email')).body.detail[0].loc).toEqual(['query', 'sort']);
    expect((await list(key, 'sort_dir=up')).body.detail[0].loc).toEqual(['query', 'sort_dir']);
  });
});

describe('filters', () => {
  it('q matches case-insensitively inside names, full name, email, phone, social handle and city', async () => {
    const { key } = await h.createOrg();
    const body = {
      first_name: 'María',
      last_name: 'López',
      email: 'mlopez@acme.io',
      phone: '+525511112222',
      social_handle: 'maria_l',
      city: 'Guadalajara',
    };
    await h.api('POST', '/v1/contacts', { key, body });
    await h.api('POST', '/v1/contacts', { key, body: { first_name: 'Other', email: 'other@x.io' } });
    for (const q of ['marí', 'LÓPEZ', 'maría lópez', 'ACME.IO', '5511112', 'maria_l', 'guadal', 'ía ló']) {
      const response = await list(key, `q=${encodeURIComponent(q)}`);
      expect(names(response), q).toEqual(['María']);
      expect(response.body.total_count).toBe(1);
    }
    expect((await list(key, 'q=zzz')).body.items).toEqual([]);
    // LIKE wildcards in q are literal characters.
    expect((await list(key, `q=${encodeURIComponent('%')}`)).body.items).toEqual([]);
    expect((await list(key, 'q=_')).body.items.map((c: any) => c.first_name)).toEqual(['María']);
  });

  it('country, origin, funnel_stage_ids and owner_id take repeated keys or commas', async () => {
    const { key } = await h.createOrg();
    const s1 = await h.api('POST', '/v1/funnel-stages', { key, body: { name: 'One' } });
    const s2 = await h.api('POST', '/v1/funnel-stages', { key, body: { name: 'Two' } });
    await h.api('POST', '/v1/contacts', { key, body: { first_name: 'a', country: 'MX', owner_id: 'u1' } });
    await h.api('POST', '/v1/contacts', {
      key,
      body: { first_name: 'b', country: 'US', owner_id: 'u2', funnel_stage_id: s2.body.id },
    });
    await h.api('POST', '/v1/contacts', { key, body: { first_name: 'c', country: 'AR' } });
    const sorted = async (query: string) => names(await list(key, `sort=name&${query}`));
    expect(await sorted('country=MX&country=US')).toEqual(['a', 'b']);
    expect(await sorted('country=MX,AR')).toEqual(['a', 'c']);
    expect(await sorted('owner_id=u2')).toEqual(['b']);
    expect(await sorted('owner_id=u1,u2&country=US')).toEqual(['b']);
    expect(await sorted(`funnel_stage_ids=${s1.body.id}`)).toEqual(['a', 'c']);
    expect(await sorted(`funnel_stage_ids=${s1.body.id},${s2.body.id}`)).toEqual(['a', 'b', 'c']);
    expect(await sorted('origin=API')).toEqual(['a', 'b', 'c']);
    expect(await sorted('origin=ADS,WEB')).toEqual([]);
    const badOrigin = await list(key, 'origin=FOO');
    expect(badOrigin.status).toBe(422);
    expect(badOrigin.body.detail[0].loc).toEqual(['query', 'origin', 0]);
    expect((await list(key, 'country=mx')).status).toBe(422);
  });

  it('created_from and created_to are inclusive dates in the organization’s timezone', async () => {
    const { key, org } = await h.createOrg({ timezone: 'America/Mexico_City' });
    await h.api('POST', '/v1/contacts', { key, body: { first_name: 'now' } });
    // The local date of the contact's creation, in the organization's timezone.
    const local = new Intl.DateTimeFormat('en-CA', { timeZone: org.timezone }).format(new Date());
    const next = new Date(`${local}T00:00:00Z`);
    next.setUTCDate(next.getUTCDate() + 1);
    const tomorrow = next.toISOString().slice(0, 10);
    const previous = new Date(`${local}T00:00:00Z`);
    previous.setUTCDate(previous.getUTCDate() - 1);
    const yesterday = previous.toISOString().slice(0, 10);
    expect(names(await list(key, `created_from=${local}&created_to=${local}`))).toEqual(['now']);
    expect(names(await list(key, `created_to=${yesterday}`))).toEqual([]);
    expect(names(await list(key, `created_from=${tomorrow}`))).toEqual([]);
    expect((await list(key, 'created_from=2026-13-01')).status).toBe(422);
  });

  it('created_from follows the timezone (a UTC date boundary is not the organization’s)', async () => {
    // 23:30 in Mexico City on the 1st is already the 2nd in UTC.
    const { key } = await h.createOrg({ timezone: 'America/Mexico_City' });
    const contact = await h.api('POST', '/v1/contacts', { key, body: { first_name: 'late' } });
    const { sql } = await import('kysely');
    await sql`update contacts set created_at = '2026-03-02T05:30:00Z' where id = ${contact.body.id}`.execute(
      h.database.db,
    );
    expect(names(await list(key, 'created_from=2026-03-01&created_to=2026-03-01'))).toEqual(['late']);
    expect(names(await list(key, 'created_from=2026-03-02'))).toEqual([]);
  });
});
