// Sub-origins: the organization's named sources inside an origin category (decisions §1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

describe('sub-origins', () => {
  it('are created (201) and listed oldest first, per organization', async () => {
    const { key } = await h.createOrg();
    const first = await h.api('POST', '/v1/sub-origins', {
      key,
      body: { key: 'google_ads', label: 'Google Ads', origin: 'ADS' },
    });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^so_/),
      key: 'google_ads',
      label: 'Google Ads',
      origin: 'ADS',
      created_at: expect.any(String),
    });
    const second = await h.api('POST', '/v1/sub-origins', {
      key,
      body: { key: 'expo', label: 'Expo 2026', origin: 'EVENT' },
    });
    const list = await h.api('GET', '/v1/sub-origins', { key });
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ items: [first.body, second.body] });
    const other = await h.createOrg();
    expect((await h.api('GET', '/v1/sub-origins', { key: other.key })).body).toEqual({ items: [] });
    expect(
      (await h.api('POST', '/v1/sub-origins', { key: other.key, body: { key: 'expo', label: 'x', origin: 'WEB' } }))
        .status,
    ).toBe(201);
  });

  it('refuse a taken key with 409 duplicate_key', async () => {
    const { key } = await h.createOrg();
    const first = await h.api('POST', '/v1/sub-origins', { key, body: { key: 'x', label: 'X', origin: 'WEB' } });
    const again = await h.api('POST', '/v1/sub-origins', { key, body: { key: 'x', label: 'Y', origin: 'ADS' } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ detail: { code: 'duplicate_key', key: 'x', id: first.body.id } });
  });

  it.each([
    [{ key: 'Bad', label: 'x', origin: 'WEB' }, ['body', 'key']],
    [{ key: 'ok', label: '', origin: 'WEB' }, ['body', 'label']],
    [{ key: 'ok', label: 'x', origin: 'PRINT' }, ['body', 'origin']],
    [{ key: 'ok', label: 'x' }, ['body', 'origin']],
  ])('refuse %j', async (body, loc) => {
    const { key } = await h.createOrg();
    const response = await h.api('POST', '/v1/sub-origins', { key, body });
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(loc);
  });
});
