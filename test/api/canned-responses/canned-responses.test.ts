// decisions §19, canned responses: CRUD, unique short codes (409), `q` on the short code's start or the text
// ignoring case, at most 1,000, and roles (agents read, admins manage in the console).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../helpers/console.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

const create = (key: string, body: unknown) => h.api('POST', '/v1/canned-responses', { key, body });

describe('canned responses', () => {
  it('are created, read, found by q, changed and deleted, refusing what §19 refuses', async () => {
    const { key } = await h.createOrg();
    const thanks = await create(key, { short_code: 'thanks', text: 'Thank you, {{contact.first_name}}!' });
    expect(thanks.status, thanks.text).toBe(201);
    expect(thanks.body).toMatchObject({ short_code: 'thanks', text: 'Thank you, {{contact.first_name}}!' });
    const hours = await create(key, { short_code: 'hours', text: 'We open at 9. THANKS for asking' });
    expect(hours.status).toBe(201);
    const percent = await create(key, { short_code: 'pct_off', text: '10% off today' });
    expect(percent.status).toBe(201);
    expect((await h.api('GET', `/v1/canned-responses/${thanks.body.id}`, { key })).body).toEqual(thanks.body);

    const find = async (q: string) =>
      (await h.api('GET', `/v1/canned-responses?q=${encodeURIComponent(q)}`, { key })).body.items.map(
        (item: { short_code: string }) => item.short_code,
      );
    expect(await find('THA')).toEqual(['hours', 'thanks']);
    expect(await find('hank')).toEqual(['hours', 'thanks']);
    expect(await find('ours')).toEqual([]);
    expect(await find('%')).toEqual(['pct_off']);
    expect(await find('_')).toEqual(['thanks']); // the text's {{contact.first_name}}, not any character
    expect((await h.api('GET', '/v1/canned-responses', { key })).body.items).toHaveLength(3);

    const duplicate = await create(key, { short_code: 'thanks', text: 'again' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toEqual({ detail: { code: 'duplicate', field: 'short_code' } });
    const renamed = await h.api('PATCH', `/v1/canned-responses/${hours.body.id}`, {
      key,
      body: { short_code: 'thanks' },
    });
    expect(renamed.status).toBe(409);
    for (const body of [
      { short_code: 'Thanks', text: 'x' },
      { short_code: 'a b', text: 'x' },
      { short_code: 'x'.repeat(31), text: 'x' },
      { short_code: 'ok', text: '' },
      { short_code: 'ok', text: 'x'.repeat(4097) },
      { short_code: 'ok' },
    ]) {
      expect((await create(key, body)).status, JSON.stringify(body)).toBe(422);
    }
    const changed = await h.api('PATCH', `/v1/canned-responses/${hours.body.id}`, { key, body: { text: 'Open 9–5' } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ short_code: 'hours', text: 'Open 9–5' });
    expect((await h.api('DELETE', `/v1/canned-responses/${hours.body.id}`, { key })).status).toBe(204);
    expect((await h.api('GET', `/v1/canned-responses/${hours.body.id}`, { key })).status).toBe(404);
    expect((await h.api('DELETE', `/v1/canned-responses/${hours.body.id}`, { key })).status).toBe(404);
    const other = await h.createOrg();
    expect((await h.api('GET', `/v1/canned-responses/${thanks.body.id}`, { key: other.key })).status).toBe(404);
  });

  it('stop at 1,000 per organization', async () => {
    const { org, key } = await h.createOrg();
    await h.database.db
      .insertInto('canned_responses')
      .values(
        Array.from({ length: 1000 }, (_, i) => ({
          org_id: org.id,
          id: `cr_seed_${i}`,
          short_code: `c${i}`,
          text: 'x',
          created_at: new Date(),
          updated_at: new Date(),
        })),
      )
      .execute();
    const refused = await create(key, { short_code: 'one_more', text: 'x' });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toMatchObject({ code: 'canned_response_limit' });
  });

  it('are read by agents in the console and managed by admins only', async () => {
    const { org, key } = await h.createOrg();
    const thanks = await create(key, { short_code: 'thanks', text: 'Thanks' });
    const agent = await createUser(h, org.id, { role: 'agent' });
    expect((await agent.client.call('GET', '/app/api/v1/canned-responses')).status).toBe(200);
    expect((await agent.client.call('GET', `/app/api/v1/canned-responses/${thanks.body.id}`)).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/app/api/v1/canned-responses', { short_code: 'mine', text: 'x' }],
      ['PATCH', `/app/api/v1/canned-responses/${thanks.body.id}`, { text: 'y' }],
      ['DELETE', `/app/api/v1/canned-responses/${thanks.body.id}`, undefined],
    ] as const) {
      const refused = await agent.client.call(method, path, body === undefined ? {} : { body });
      expect(refused.status, `${method} ${path}`).toBe(403);
      expect(refused.body.detail.code).toBe('forbidden_for_role');
    }
    const admin = await createUser(h, org.id, { role: 'admin' });
    const made = await admin.client.call('POST', '/app/api/v1/canned-responses', {
      body: { short_code: 'mine', text: 'x' },
    });
    expect(made.status).toBe(201);
  });
});
