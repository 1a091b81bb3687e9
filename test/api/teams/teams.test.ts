// decisions §19, teams: CRUD with its refusals and roles, and auto-assignment: the available member with the
// fewest open and pending conversations under the limit, the least recently given first; waiting conversations given
// out oldest first as soon as a member has room; never over the limit, even when conversations arrive at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../helpers/clock.ts';
import { createUser } from '../../helpers/console.ts';
import { onCitus } from '../../helpers/database.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { addUser, eventsOf, inbound, inboxOrg, openConversation } from '../../helpers/team-inbox.ts';

const clock = manualClock(Date.parse('2030-05-01T10:00:00.000Z'));
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true, clock });
});
afterAll(() => h.close());

let phones = 0;
const nextPhone = () => `+1555720${String(++phones).padStart(4, '0')}`;
const patch = (key: string, id: string, body: unknown) => h.api('PATCH', `/v1/conversations/${id}`, { key, body });

async function team(key: string, body: Record<string, unknown>) {
  const created = await h.api('POST', '/v1/teams', { key, body });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

describe('teams', () => {
  it('are created, read, listed, changed and deleted, refusing what §19 refuses', async () => {
    const { orgId, key } = await inboxOrg(h);
    const [ana, ben] = [await addUser(h, orgId), await addUser(h, orgId)];
    const created = await team(key, { name: 'Support', member_ids: [ben, ana] });
    expect(created).toMatchObject({
      name: 'Support',
      member_ids: [ana, ben].sort(),
      auto_assign: false,
      max_open_per_member: 20,
    });
    expect((await h.api('GET', `/v1/teams/${created.id}`, { key })).body).toEqual(created);
    expect((await h.api('GET', '/v1/teams', { key })).body).toEqual({ items: [created] });

    const duplicate = await h.api('POST', '/v1/teams', { key, body: { name: 'SUPPORT' } });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toEqual({ detail: { code: 'duplicate', field: 'name' } });
    const stranger = await addUser(h, (await h.createOrg()).org.id);
    const badMember = await h.api('POST', '/v1/teams', { key, body: { name: 'Sales', member_ids: [ana, stranger] } });
    expect(badMember.status).toBe(422);
    expect(badMember.body.detail[0].loc).toEqual(['body', 'member_ids', 1]);
    for (const body of [
      { name: '' },
      { name: 'x'.repeat(101) },
      { name: 'Sales', max_open_per_member: 0 },
      { name: 'Sales', max_open_per_member: 1001 },
      { name: 'Sales', member_ids: [ana, ana] },
    ]) {
      expect((await h.api('POST', '/v1/teams', { key, body })).status, JSON.stringify(body)).toBe(422);
    }

    const second = await team(key, { name: 'Sales' });
    const renamed = await h.api('PATCH', `/v1/teams/${second.id}`, { key, body: { name: 'support' } });
    expect(renamed.status).toBe(409);
    const changed = await h.api('PATCH', `/v1/teams/${second.id}`, {
      key,
      body: { name: 'Sales EU', member_ids: [ana], auto_assign: true, max_open_per_member: 5 },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({
      name: 'Sales EU',
      member_ids: [ana],
      auto_assign: true,
      max_open_per_member: 5,
    });

    expect((await h.api('DELETE', `/v1/teams/${second.id}`, { key })).status).toBe(204);
    expect((await h.api('GET', `/v1/teams/${second.id}`, { key })).status).toBe(404);
    expect((await h.api('DELETE', `/v1/teams/${second.id}`, { key })).status).toBe(404);
  });

  it('stop at 100 per organization', async () => {
    const { key } = await inboxOrg(h);
    // Four at a time (within the organization's bulkhead): the count is taken under the organization's lock.
    for (let i = 0; i < 100; i += 4) {
      await Promise.all([0, 1, 2, 3].map((j) => team(key, { name: `Team ${i + j}` })));
    }
    const refused = await h.api('POST', '/v1/teams', { key, body: { name: 'One more' } });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toMatchObject({ code: 'team_limit' });
  });

  it('deleted leave their conversations with team_id null, each with its event', async () => {
    const { orgId, key, channelId } = await inboxOrg(h);
    const support = await team(key, { name: 'Support' });
    const conversation = await openConversation(h, key, channelId, nextPhone());
    expect((await patch(key, conversation.id, { team_id: support.id })).body.team_id).toBe(support.id);
    expect((await h.api('DELETE', `/v1/teams/${support.id}`, { key })).status).toBe(204);
    expect((await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body.team_id).toBeNull();
    const events = await eventsOf(h, orgId, 'conversation.updated');
    expect(events.map((event) => [event.changed, event.previous])).toEqual([
      [['team_id'], { team_id: null }],
      [['team_id'], { team_id: support.id }],
    ]);
  });

  it('are read by agents in the console and managed by admins only', async () => {
    const { orgId, key } = await inboxOrg(h);
    const support = await team(key, { name: 'Support' });
    const agent = await createUser(h, orgId, { role: 'agent' });
    expect((await agent.client.call('GET', '/app/api/v1/teams')).status).toBe(200);
    expect((await agent.client.call('GET', `/app/api/v1/teams/${support.id}`)).status).toBe(200);
    const refused = await agent.client.call('POST', '/app/api/v1/teams', { body: { name: 'Mine' } });
    expect(refused.status).toBe(403);
    expect(refused.body.detail.code).toBe('forbidden_for_role');
    expect((await agent.client.call('DELETE', `/app/api/v1/teams/${support.id}`)).status).toBe(403);
    const admin = await createUser(h, orgId, { role: 'admin' });
    expect((await admin.client.call('POST', '/app/api/v1/teams', { body: { name: 'Billing' } })).status).toBe(201);
  });
});

describe('auto-assignment', () => {
  async function autoTeam(members: number, limit: number) {
    const org = await inboxOrg(h);
    const users = [];
    for (let i = 0; i < members; i++) users.push(await addUser(h, org.orgId));
    const created = await team(org.key, {
      name: 'Support',
      member_ids: users,
      auto_assign: true,
      max_open_per_member: limit,
    });
    /** A new conversation of the team (a contact writes, then it is put in the team), answered as it is now. */
    const arrive = async () => {
      const conversation = await openConversation(h, org.key, org.channelId, nextPhone());
      clock.advance(1000);
      const put = await patch(org.key, conversation.id, { team_id: created.id });
      expect(put.status, put.text).toBe(200);
      return put.body;
    };
    return { ...org, users, team: created, arrive };
  }

  it('gives each new conversation to the least loaded member in turn, then waits, then gives out oldest first', async () => {
    const { key, users, arrive, orgId } = await autoTeam(2, 1);
    const first = await arrive();
    const second = await arrive();
    expect([first.assignee.id, second.assignee.id].sort()).toEqual([...users].sort());
    const third = await arrive();
    const fourth = await arrive();
    expect([third.assignee, fourth.assignee]).toEqual([null, null]);
    expect(third.waiting_since < fourth.waiting_since).toBe(true);
    // Resolving frees its member: the oldest waiting goes to them.
    const resolved = await patch(key, first.id, { status: 'resolved' });
    expect(resolved.status).toBe(200);
    const given = (await h.api('GET', `/v1/conversations/${third.id}`, { key })).body;
    expect(given.assignee).toEqual(first.assignee);
    expect((await h.api('GET', `/v1/conversations/${fourth.id}`, { key })).body.assignee).toBeNull();
    // Reassigning frees a member too.
    const other = await addUser(h, orgId);
    expect((await patch(key, second.id, { assignee: { type: 'user', id: other } })).status).toBe(200);
    expect((await h.api('GET', `/v1/conversations/${fourth.id}`, { key })).body.assignee).toEqual(second.assignee);
    const events = await eventsOf(h, orgId, 'conversation.updated');
    const assignments = events.filter((event) => event.changed.includes('assignee'));
    expect(assignments.at(-1)).toMatchObject({ changed: ['assignee'], previous: { assignee: null } });
  });

  it('skips members who are away and gives to a member who becomes available', async () => {
    const { orgId, key, arrive } = await autoTeam(0, 5);
    const agent = await createUser(h, orgId, { role: 'agent' });
    const support = (await h.api('GET', '/v1/teams', { key })).body.items[0];
    expect((await agent.client.call('PATCH', '/app/api/me', { body: { available: false } })).status).toBe(200);
    const members = await h.api('PATCH', `/v1/teams/${support.id}`, { key, body: { member_ids: [agent.user.id] } });
    expect(members.status).toBe(200);
    const waiting = await arrive();
    expect(waiting.assignee).toBeNull();
    expect((await agent.client.call('PATCH', '/app/api/me', { body: { available: true } })).status).toBe(200);
    const given = (await h.api('GET', `/v1/conversations/${waiting.id}`, { key })).body;
    expect(given.assignee).toEqual({ type: 'user', id: agent.user.id });
  });

  it('gives out what waits when auto-assignment is switched on or the limit rises', async () => {
    const { key, team: support, arrive } = await autoTeam(1, 1);
    const taken = await arrive();
    const waiting = await arrive();
    expect([taken.assignee === null, waiting.assignee]).toEqual([false, null]);
    expect((await h.api('PATCH', `/v1/teams/${support.id}`, { key, body: { max_open_per_member: 2 } })).status).toBe(
      200,
    );
    expect((await h.api('GET', `/v1/conversations/${waiting.id}`, { key })).body.assignee).toEqual(taken.assignee);
  });

  it('a contact’s message reopening a resolved conversation of the team gives it out again', async () => {
    const { key, channelId, arrive } = await autoTeam(1, 5);
    const conversation = await arrive();
    expect((await patch(key, conversation.id, { status: 'resolved', assignee: null })).status).toBe(200);
    clock.advance(1000);
    await inbound(h, channelId, conversation.contact.phone, 'back again');
    const read = (await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body;
    expect(read).toMatchObject({ status: 'open', assignee: conversation.assignee });
  });

  it('never pushes a member over the limit when conversations arrive at once', async () => {
    const { key, channelId, team: support, users } = await autoTeam(2, 3);
    const conversations = [];
    for (let i = 0; i < 12; i++) conversations.push(await openConversation(h, key, channelId, nextPhone()));
    await Promise.all(conversations.map((c) => patch(key, c.id, { team_id: support.id })));
    const list = await h.api('GET', '/v1/conversations?limit=50', { key });
    const counts = new Map<string | null, number>();
    for (const item of list.body.items) {
      const owner = item.assignee?.id ?? null;
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
    }
    expect(Object.fromEntries(counts)).toEqual({ [users[0] as string]: 3, [users[1] as string]: 3, null: 6 });
  });

  /**
   * A model of the rule beside the API: each conversation given must go where the rule says (the available member
   * with the fewest open and pending, under the limit, the least recently given first), oldest waiting first.
   */
  async function run(symmetric: boolean) {
    const { key, users, arrive } = await autoTeam(3, 4);
    let seed = symmetric ? 7 : 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const turns = new Map<string, number>(users.map((user) => [user, 0]));
    const lastTurn = new Map<string, number>(users.map((user) => [user, 0]));
    const open = new Map<string, string[]>(users.map((user) => [user, []]));
    const waiting: string[] = [];
    let counter = 0;
    const expected = () =>
      [...users]
        .filter((user) => (open.get(user)?.length ?? 0) < 4)
        .sort(
          (a, b) =>
            (open.get(a)?.length ?? 0) - (open.get(b)?.length ?? 0) ||
            (lastTurn.get(a) ?? 0) - (lastTurn.get(b) ?? 0) ||
            a.localeCompare(b),
        )[0];
    const give = (id: string, owner: string) => {
      turns.set(owner, (turns.get(owner) ?? 0) + 1);
      lastTurn.set(owner, ++counter);
      open.get(owner)?.push(id);
    };
    const ownerOf = async (id: string) =>
      (await h.api('GET', `/v1/conversations/${id}`, { key })).body.assignee?.id as string | undefined;
    for (let i = 0; i < 100; i++) {
      const rule = expected();
      const conversation = await arrive();
      expect(conversation.assignee?.id).toBe(rule);
      if (rule) give(conversation.id, rule);
      else waiting.push(conversation.id);
      const resolving = symmetric ? (random() < 0.35 ? [...users] : []) : users.filter(() => random() < 0.3);
      for (const user of resolving.sort(() => random() - 0.5)) {
        const id = open.get(user)?.shift();
        if (!id) continue;
        expect((await patch(key, id, { status: 'resolved' })).status).toBe(200);
        const next = waiting[0];
        if (next === undefined) continue;
        const owner = expected();
        expect(await ownerOf(next)).toBe(owner);
        if (owner) {
          waiting.shift();
          give(next, owner);
        }
      }
      // Nobody over the limit, as the API counts it.
      const list = await h.api('GET', '/v1/conversations?limit=200', { key });
      for (const user of users) {
        const load = list.body.items.filter(
          (item: { assignee: { id: string } | null; status: string }) =>
            item.assignee?.id === user && (item.status === 'open' || item.status === 'pending'),
        ).length;
        expect(load).toBe(open.get(user)?.length);
        expect(load).toBeLessThanOrEqual(4);
      }
    }
    return [...turns.values()];
  }

  // About 600 requests one after another: on Citus each is a few hops from the coordinator to a worker, and at load
  // 15 on 2 CPUs a model took more than the citus project's 120 s (D351).
  const modelTimeout = onCitus ? 360_000 : undefined;

  it(
    'is fair: 3 members, 100 conversations, random resolves: nobody over the limit, turns differ by at most one',
    async () => {
      const turns = await run(true);
      expect(Math.max(...turns) - Math.min(...turns)).toBeLessThanOrEqual(1);
    },
    modelTimeout,
  );

  it(
    'follows the rule for every conversation given when members resolve at different paces',
    async () => {
      await run(false);
    },
    modelTimeout,
  );
});

describe('a person removed', () => {
  it('leaves their conversations unassigned, each with its event, and a team gives them to someone else', async () => {
    const { orgId, key, channelId } = await inboxOrg(h);
    const admin = await createUser(h, orgId, { role: 'admin' });
    const [ana, ben] = [await addUser(h, orgId), await addUser(h, orgId)];
    const support = await team(key, { name: 'Support', member_ids: [ana], auto_assign: true });
    const solo = await openConversation(h, key, channelId, nextPhone());
    expect((await patch(key, solo.id, { assignee: { type: 'user', id: ana } })).status).toBe(200);
    const teamed = await openConversation(h, key, channelId, nextPhone());
    expect((await patch(key, teamed.id, { team_id: support.id })).body.assignee).toEqual({ type: 'user', id: ana });
    expect((await h.api('PATCH', `/v1/teams/${support.id}`, { key, body: { member_ids: [ana, ben] } })).status).toBe(
      200,
    );
    const removed = await admin.client.call('DELETE', `/app/api/users/${ana}`);
    expect(removed.status, removed.text).toBe(204);
    expect((await h.api('GET', `/v1/conversations/${solo.id}`, { key })).body.assignee).toBeNull();
    expect((await h.api('GET', `/v1/conversations/${teamed.id}`, { key })).body.assignee).toEqual({
      type: 'user',
      id: ben,
    });
    const events = await eventsOf(h, orgId, 'conversation.updated');
    expect(events.filter((event) => event.previous.assignee?.id === ana)).toHaveLength(2);
  });
});
