// A cursor walk visits every contact exactly once while contacts are created and updated (D38).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../helpers/clock.ts';
import { controlClient, testDatabaseKind } from '../../helpers/database.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

const CITIES = ['Lima', 'Austin', null, 'bogota', 'Zacatecas', null];
const NAMES = ['ana', 'Bruno', 'carla', null, 'Diego', 'elena', 'Fabio'];

async function seed(key: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await h.api('POST', '/v1/contacts', {
      key,
      body: { first_name: NAMES[i % NAMES.length], last_name: `n${i}`, city: CITIES[i % CITIES.length] },
    });
    ids.push(response.body.id);
  }
  return ids;
}

let round = 0;
/** Creates two contacts and rewrites three existing ones in every sort key (name, city, updated_at). */
function churn(key: string, ids: string[]) {
  round++;
  const writes = [0, 1].map((i) =>
    h.api('POST', '/v1/contacts', { key, body: { first_name: `new${round}_${i}`, city: 'Aaa' } }),
  );
  for (let i = 0; i < 3; i++) {
    const id = ids[(round * 7 + i * 13) % ids.length] as string;
    const flip = (round + i) % 2 === 0;
    writes.push(
      h.api('PATCH', `/v1/contacts/${id}`, {
        key,
        body: { first_name: flip ? 'aaa' : 'zzz', city: flip ? null : 'Aaa', country: flip ? 'MX' : null },
      }),
    );
  }
  return writes;
}

describe('a cursor walk during writes', () => {
  it.each([
    ['recent', 'desc'],
    ['recent', 'asc'],
    ['name', 'asc'],
    ['name', 'desc'],
    ['city', 'asc'],
    ['city', 'desc'],
    ['country', 'asc'],
    ['origin', 'desc'],
  ])('in %s %s order visits every contact that existed when it began exactly once', async (sort, dir) => {
    const { key } = await h.createOrg();
    const ids = await seed(key, 40);
    const seen: string[] = [];
    // Contacts created alongside the first page may commit before the walk's snapshot: they may be part of it.
    const alongsideFirstPage = new Set<string>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/v1/contacts?sort=${sort}&sort_dir=${dir}&limit=4${cursor ? `&cursor=${cursor}` : ''}`;
      // The page is read while contacts are being created and updated.
      const [page, ...writes] = await Promise.all([h.api('GET', url, { key }), ...churn(key, ids)]);
      if (!page) throw new Error('no page');
      for (const write of writes) expect([200, 201]).toContain(write.status);
      if (pages === 0) {
        for (const write of writes) if (write.status === 201) alongsideFirstPage.add(write.body.id);
      }
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((item: { id: string }) => item.id));
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor && pages < 100);
    expect(new Set(seen).size).toBe(seen.length);
    const original = new Set(ids);
    expect(seen.filter((id) => original.has(id)).sort()).toEqual([...ids].sort());
    for (const id of seen.filter((id) => !original.has(id))) expect(alongsideFirstPage).toContain(id);
  });

  it('drops a contact deleted before the walk reaches it', async () => {
    const { key } = await h.createOrg();
    const ids = await seed(key, 6);
    const first = await h.api('GET', '/v1/contacts?limit=2', { key });
    const remaining = ids.filter((id) => !first.body.items.some((item: { id: string }) => item.id === id));
    await h.api('DELETE', `/v1/contacts/${remaining[0]}`, { key });
    const rest = await h.api('GET', `/v1/contacts?limit=10&cursor=${first.body.next_cursor}`, { key });
    expect(rest.body.items.map((item: { id: string }) => item.id)).not.toContain(remaining[0]);
    expect(rest.body.items).toHaveLength(3);
  });

  it('shows current data on later pages', async () => {
    const { key } = await h.createOrg();
    const ids = await seed(key, 4);
    const first = await h.api('GET', '/v1/contacts?limit=2&sort=recent&sort_dir=asc', { key });
    await h.api('PATCH', `/v1/contacts/${ids[3]}`, { key, body: { last_name: 'changed' } });
    const rest = await h.api('GET', `/v1/contacts?limit=2&sort=recent&sort_dir=asc&cursor=${first.body.next_cursor}`, {
      key,
    });
    expect(rest.body.items.map((item: { id: string }) => item.id)).toEqual([ids[2], ids[3]]);
    expect(rest.body.items[1].last_name).toBe('changed');
  });
});

// D315: a walk is pinned to the organization's contact version, which a writer takes and holds until it commits.
describe.skipIf(testDatabaseKind() !== 'postgres')('a cursor walk and a write in flight when it begins', () => {
  it('places a contact moved by a transaction still open at its first page where that page saw it, once', async () => {
    const { key, org } = await h.createOrg();
    const ids = await seed(key, 6);
    const control = await controlClient(h.database);
    try {
      await control.query('begin');
      // Moves the oldest contact to the end of `recent asc` (and renames it), uncommitted.
      await control.query(
        `update contacts set updated_at = now() + interval '1 hour', first_name = 'moved' where org_id = $1 and id = $2`,
        [org.id, ids[0]],
      );
      const url = '/v1/contacts?sort=recent&sort_dir=asc&limit=2';
      const first = await h.api('GET', url, { key });
      expect(first.body.items.map((item: { id: string }) => item.id)).toEqual([ids[0], ids[1]]);
      await control.query('commit');
      const seen = first.body.items.map((item: { id: string }) => item.id);
      let cursor: string | null = first.body.next_cursor;
      while (cursor) {
        const page = await h.api('GET', `${url}&cursor=${cursor}`, { key });
        seen.push(...page.body.items.map((item: { id: string }) => item.id));
        cursor = page.body.next_cursor;
      }
      expect(seen).toEqual(ids);
      // A walk begun now sees the move.
      const again = await h.api('GET', '/v1/contacts?sort=recent&sort_dir=asc&limit=10', { key });
      expect(again.body.items.map((item: { id: string }) => item.id)).toEqual([...ids.slice(1), ids[0]]);
    } finally {
      await control.end();
    }
  });
});

describe('cursor lifetime', () => {
  it('a cursor older than 24 hours is a 422', async () => {
    const clock = manualClock();
    const timed = await startHarness({ unlimited: true, clock, database: h.database });
    try {
      const { key } = await timed.createOrg();
      for (let i = 0; i < 3; i++) await timed.api('POST', '/v1/contacts', { key, body: {} });
      const first = await timed.api('GET', '/v1/contacts?limit=1', { key });
      clock.advance(24 * 60 * 60 * 1000);
      expect((await timed.api('GET', `/v1/contacts?limit=1&cursor=${first.body.next_cursor}`, { key })).status).toBe(
        200,
      );
      clock.advance(1);
      const expired = await timed.api('GET', `/v1/contacts?limit=1&cursor=${first.body.next_cursor}`, { key });
      expect(expired.status).toBe(422);
      expect(expired.body.detail[0]).toMatchObject({
        loc: ['query', 'cursor'],
        msg: expect.stringContaining('expired'),
      });
    } finally {
      await timed.close();
    }
  });
});
