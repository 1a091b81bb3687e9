// decisions §19, the conversations list: filters by status, assignee, team, label (ignoring case) and priority;
// sorts by latest activity (the default) or oldest waiting first (not waiting last); cursors bound to both (§2).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../helpers/clock.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { addUser, inboxOrg, openConversation } from '../../helpers/team-inbox.ts';

const clock = manualClock(Date.parse('2030-06-01T10:00:00.000Z'));
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true, clock });
});
afterAll(() => h.close());

let phones = 0;
const nextPhone = () => `+1555730${String(++phones).padStart(4, '0')}`;

/** Every page of a list, following its cursors two at a time: the ids in order. */
async function walk(key: string, query: string) {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const path: string = `/v1/conversations?limit=2&${query}${cursor ? `&cursor=${cursor}` : ''}`;
    const page = await h.api('GET', path, { key });
    expect(page.status, page.text).toBe(200);
    ids.push(...page.body.items.map((item: { id: string }) => item.id));
    cursor = page.body.next_cursor;
  } while (cursor);
  return ids;
}

describe('the conversations list', () => {
  it('filters by status, assignee, team, label and priority, and pages each', async () => {
    const { orgId, key, channelId } = await inboxOrg(h);
    const ana = await addUser(h, orgId);
    const support = (await h.api('POST', '/v1/teams', { key, body: { name: 'Support' } })).body;
    const c: { id: string }[] = [];
    for (let i = 0; i < 5; i++) {
      c.push(await openConversation(h, key, channelId, nextPhone()));
      clock.advance(1000);
    }
    const patch = async (index: number, body: unknown) => {
      const changed = await h.api('PATCH', `/v1/conversations/${c[index]?.id}`, { key, body });
      expect(changed.status, changed.text).toBe(200);
    };
    await patch(0, { status: 'resolved', assignee: { type: 'user', id: ana }, labels: ['VIP'] });
    await patch(1, { status: 'pending', team_id: support.id, priority: 'high' });
    await patch(2, { assignee: { type: 'user', id: ana }, labels: ['vip', 'Billing'], priority: 'high' });
    await patch(3, { status: 'snoozed', team_id: support.id });
    const ids = (...indexes: number[]) => indexes.map((index) => c[index]?.id);
    // Newest activity first: 4, 3, 2, 1, 0.
    expect(await walk(key, '')).toEqual(ids(4, 3, 2, 1, 0));
    expect(await walk(key, 'status=open')).toEqual(ids(4, 2));
    expect(await walk(key, 'status=open&status=pending')).toEqual(ids(4, 2, 1));
    expect(await walk(key, 'status=resolved,snoozed')).toEqual(ids(3, 0));
    expect(await walk(key, 'assignee=unassigned')).toEqual(ids(4, 3, 1));
    expect(await walk(key, `assignee=${ana}`)).toEqual(ids(2, 0));
    expect(await walk(key, 'assignee=ai')).toEqual([]);
    expect(await walk(key, `team_id=${support.id}`)).toEqual(ids(3, 1));
    expect(await walk(key, 'label=Vip')).toEqual(ids(2, 0));
    expect(await walk(key, 'label=billing')).toEqual(ids(2));
    expect(await walk(key, 'priority=high')).toEqual(ids(2, 1));
    expect(await walk(key, `priority=high&assignee=${ana}&label=VIP&status=open`)).toEqual(ids(2));
    for (const query of ['status=closed', 'priority=highest', 'sort=newest']) {
      expect((await h.api('GET', `/v1/conversations?${query}`, { key })).status, query).toBe(422);
    }
  });

  it('sorts by oldest waiting first, not waiting last, with cursors of its own', async () => {
    const { key, channelId } = await inboxOrg(h);
    const c: { id: string }[] = [];
    for (let i = 0; i < 5; i++) {
      c.push(await openConversation(h, key, channelId, nextPhone()));
      clock.advance(1000);
    }
    // 1 and 3 are answered (not waiting); the others wait since they wrote (0 oldest).
    for (const index of [1, 3]) {
      const reply = await h.api('POST', `/v1/conversations/${c[index]?.id}/messages`, {
        key,
        body: { type: 'text', text: 'hi' },
      });
      expect(reply.status).toBe(202);
    }
    const ids = (...indexes: number[]) => indexes.map((index) => c[index]?.id);
    expect(await walk(key, 'sort=waiting_since')).toEqual(ids(0, 2, 4, 1, 3));
    expect(await walk(key, 'sort=last_activity_at')).toEqual(ids(3, 1, 4, 2, 0));

    const first = await h.api('GET', '/v1/conversations?limit=2&sort=waiting_since', { key });
    const cursor = first.body.next_cursor;
    const other = await h.api('GET', `/v1/conversations?limit=2&cursor=${cursor}`, { key });
    expect(other.status).toBe(422);
    expect(other.body.detail[0].loc).toEqual(['query', 'cursor']);
    const filtered = await h.api('GET', `/v1/conversations?limit=2&sort=waiting_since&status=open&cursor=${cursor}`, {
      key,
    });
    expect(filtered.status).toBe(422);
  });
});
