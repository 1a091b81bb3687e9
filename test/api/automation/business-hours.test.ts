// decisions §20: GET/PUT /v1/business-hours — disabled by default, stored whole, every 422 at its place, and the
// automation scopes (§18).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

const put = (key: string, body: unknown) => h.api('PUT', '/v1/business-hours', { key, body });

describe('business hours', () => {
  it('are disabled, with an empty week and no away message, until saved', async () => {
    const { key } = await h.createOrg();
    const read = await h.api('GET', '/v1/business-hours', { key });
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ enabled: false, week: [], away_message: null });
  });

  it('replaces the whole setting: a day listed twice, closed days left out, 24:00', async () => {
    const { key } = await h.createOrg();
    const hours = {
      enabled: true,
      week: [
        { day: 'mon', open: '09:00', close: '12:30' },
        { day: 'mon', open: '13:30', close: '24:00' },
        { day: 'sat', open: '10:00', close: '14:00' },
      ],
      away_message: { text: 'We are closed; back at 09:00.' },
    };
    const saved = await put(key, hours);
    expect(saved.status).toBe(200);
    expect(saved.body).toEqual(hours);
    expect((await h.api('GET', '/v1/business-hours', { key })).body).toEqual(hours);
    // PUT replaces: what is left out goes back to its default.
    expect((await put(key, { enabled: false })).body).toEqual({ enabled: false, week: [], away_message: null });
    expect((await h.api('GET', '/v1/business-hours', { key })).body).toEqual({
      enabled: false,
      week: [],
      away_message: null,
    });
  });

  it.each([
    ['close not after open', { week: [{ day: 'tue', open: '10:00', close: '10:00' }] }, ['body', 'week', 0, 'close']],
    ['close before open', { week: [{ day: 'tue', open: '10:00', close: '09:00' }] }, ['body', 'week', 0, 'close']],
    ['an unknown day', { week: [{ day: 'funday', open: '10:00', close: '11:00' }] }, ['body', 'week', 0, 'day']],
    ['a time not HH:MM', { week: [{ day: 'tue', open: '9:00', close: '11:00' }] }, ['body', 'week', 0, 'open']],
    ['24:00 as an opening', { week: [{ day: 'tue', open: '24:00', close: '24:00' }] }, ['body', 'week', 0, 'open']],
    ['an empty away message', { away_message: { text: '' } }, ['body', 'away_message', 'text']],
    ['a long away message', { away_message: { text: 'x'.repeat(4097) } }, ['body', 'away_message', 'text']],
    ['enabled missing', { enabled: undefined }, ['body', 'enabled']],
  ])('refuses %s with a 422 at its place and keeps what was stored', async (_label, change, loc) => {
    const { key } = await h.createOrg();
    const refused = await put(key, { enabled: true, week: [], ...change });
    expect(refused.status).toBe(422);
    expect(refused.body.detail.map((issue: { loc: unknown }) => issue.loc)).toContainEqual(loc);
    expect((await h.api('GET', '/v1/business-hours', { key })).body.enabled).toBe(false);
  });

  it('needs automation:read to read and automation:write to change', async () => {
    const { org } = await h.createOrg();
    const reader = await h.admin('POST', `/organizations/${org.id}/api-keys`, { scopes: ['automation:read'] });
    const writer = await h.admin('POST', `/organizations/${org.id}/api-keys`, { scopes: ['automation:write'] });
    const other = await h.admin('POST', `/organizations/${org.id}/api-keys`, { scopes: ['conversations:write'] });
    expect((await h.api('GET', '/v1/business-hours', { key: reader.body.key })).status).toBe(200);
    expect((await put(reader.body.key, { enabled: true })).body).toEqual({
      detail: { code: 'insufficient_scope', required: 'automation:write' },
    });
    expect((await put(writer.body.key, { enabled: true })).status).toBe(200);
    expect((await h.api('GET', '/v1/business-hours', { key: writer.body.key })).status).toBe(200);
    expect((await h.api('GET', '/v1/business-hours', { key: other.body.key })).status).toBe(403);
  });
});
