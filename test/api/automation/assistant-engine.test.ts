// decisions §20: the autonomous assistant through HTTP — a new conversation on a served number starts pending with
// the assistant; the sandbox provider answers from the FAQs and hands off otherwise (handoff message as `ai`,
// assignee null, status open, the handoff team, the private note); against a fake OpenAI-compatible server: the
// request never carries a private note, a person assigned mid-call drops the answer, the reply limit hands off
// without a call, and garbage, HTTP 500 and a timeout hand off with `provider_error`.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answer, type FakeOpenAi, startFakeOpenAi } from '../../fakes/fake-openai.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { messagesOf } from '../../helpers/messages.ts';
import { phones } from '../../helpers/sends.ts';
import { addUser, eventsOf, inbound, inboxOrg } from '../../helpers/team-inbox.ts';
import { waitUntil } from '../../helpers/wait.ts';

let h: Harness;
let model: FakeOpenAi;
beforeAll(async () => {
  h = await startHarness({ unlimited: true, ai: { timeoutMs: 500 } });
  model = await startFakeOpenAi();
});
afterAll(async () => {
  await model.close();
  await h.close();
});

const FAQS = [{ question: 'opening hours', answer: 'Every day from 8:00 to 19:00.' }];

async function assistantOrg(settings: Record<string, unknown> = {}) {
  const org = await inboxOrg(h);
  const saved = await h.api('PUT', '/v1/ai-assistant', {
    key: org.key,
    body: { enabled: true, mode: 'autonomous', faqs: FAQS, ...settings },
  });
  expect(saved.status, saved.text).toBe(200);
  return org;
}

async function conversationOf(key: string, phone: string) {
  const list = await h.api('GET', '/v1/conversations', { key });
  return list.body.items.find((item: { contact: { phone: string } }) => item.contact.phone === phone);
}

/** The assistant's worker step until no job is left. */
async function answerAll() {
  while ((await h.wiring.assistantJobs.runOnce()) > 0) {}
}

describe('the autonomous assistant, sandbox provider', () => {
  it('owns a new conversation on its number, answers from the FAQs as ai, and hands off otherwise', async () => {
    const { orgId, key, channelId } = await assistantOrg({ handoff_message: 'A person will be with you.' });
    // A team (written directly: this test is about the handoff, not §19's teams API).
    const team = { body: { id: `team_${phones(1)[0]?.slice(1)}` } };
    await sql`insert into teams (org_id, id, name, created_at, updated_at)
      values (${orgId}, ${team.body.id}, 'Support', now(), now())`.execute(h.database.db);
    await h.api('PUT', '/v1/ai-assistant', {
      key,
      body: {
        enabled: true,
        mode: 'autonomous',
        faqs: FAQS,
        handoff_message: 'A person will be with you.',
        handoff_team_id: team.body.id,
      },
    });
    const [phone] = phones(1) as [string];
    await inbound(h, channelId, phone, 'What are your OPENING HOURS?');
    const started = await conversationOf(key, phone);
    expect(started).toMatchObject({ status: 'pending', assignee: { type: 'ai' } });
    await answerAll();
    expect((await messagesOf(h, key, started.id, { oldestFirst: true })).map((m) => [m.sender, m.text]).sort()).toEqual(
      [
        ['ai', 'Every day from 8:00 to 19:00.'],
        ['contact', 'What are your OPENING HOURS?'],
      ],
    );

    await inbound(h, channelId, phone, 'where is my order?');
    await answerAll();
    const handed = await conversationOf(key, phone);
    expect(handed).toMatchObject({ status: 'open', assignee: null, team_id: team.body.id });
    // (The platform's timestamps are whole seconds: a contact's message may list before an earlier answer.)
    const messages = await messagesOf(h, key, started.id, { oldestFirst: true });
    expect(messages.filter((m) => m.sender !== 'contact').map((m) => [m.sender, m.type, m.text, m.private])).toEqual([
      ['ai', 'text', 'Every day from 8:00 to 19:00.', false],
      ['ai', 'text', 'A person will be with you.', false],
      ['system', 'note', 'AI handed off: no_matching_faq', true],
    ]);
    const updates = await eventsOf(h, orgId, 'conversation.updated');
    expect(updates.at(-1).changed.sort()).toEqual(['assignee', 'status', 'team_id']);

    // Handed off: the next message is the people's.
    await inbound(h, channelId, phone, 'opening hours?');
    await answerAll();
    expect(await messagesOf(h, key, started.id, { oldestFirst: true })).toHaveLength(6);
    // The assistant's messages reach the platform as replies.
    while ((await h.wiring.replies.runOnce()) > 0) {}
    const sent = await h.api('GET', `/v1/conversations/${started.id}/messages?limit=200`, { key });
    expect(
      sent.body.items.filter((m: { sender: string }) => m.sender === 'ai').map((m: { status: string }) => m.status),
    ).toEqual(['sent', 'sent']);
  });

  it('takes a conversation given to it by PATCH while enabled (409 ai_disabled otherwise)', async () => {
    const { key, channelId } = await inboxOrg(h);
    const [phone] = phones(1) as [string];
    await inbound(h, channelId, phone, 'hello');
    const conversation = await conversationOf(key, phone);
    const give = () =>
      h.api('PATCH', `/v1/conversations/${conversation.id}`, { key, body: { assignee: { type: 'ai' } } });
    expect((await give()).body).toEqual({ detail: { code: 'ai_disabled' } });
    await h.api('PUT', '/v1/ai-assistant', { key, body: { enabled: true, mode: 'autonomous', faqs: FAQS } });
    const given = await give();
    expect(given.status).toBe(200);
    expect(given.body.assignee).toEqual({ type: 'ai' });
    await inbound(h, channelId, phone, 'your opening hours?');
    await answerAll();
    const texts = (await messagesOf(h, key, conversation.id, { oldestFirst: true }))
      .filter((m) => m.sender === 'ai')
      .map((m) => m.text);
    expect(texts).toEqual(['Every day from 8:00 to 19:00.']);
  });

  it('drops a job whose number it no longer serves when the job is claimed (D270)', async () => {
    const { orgId, key, channelId } = await assistantOrg();
    const other = await h.createAccount(orgId, { numbers: [{ phone: '+15550100009' }] });
    const [phone] = phones(1) as [string];
    await inbound(h, channelId, phone, 'opening hours?');
    const conversation = await conversationOf(key, phone);
    expect(conversation).toMatchObject({ status: 'pending', assignee: { type: 'ai' } });
    // The job is queued; before it is claimed the assistant is given only the other number.
    const moved = await h.api('PUT', '/v1/ai-assistant', {
      key,
      body: { enabled: true, mode: 'autonomous', faqs: FAQS, channel_ids: [other.numbers[0].id] },
    });
    expect(moved.status, moved.text).toBe(200);
    expect(await h.wiring.assistantJobs.runOnce()).toBe(1);
    expect(await h.wiring.assistantJobs.runOnce()).toBe(0); // dropped, not left for its lease
    expect((await messagesOf(h, key, conversation.id, { oldestFirst: true })).map((m) => m.sender)).toEqual([
      'contact',
    ]);
  });

  it('sends nothing to a contact who opted out, nor once the window has closed, while its job waited', async () => {
    const { orgId, key, channelId } = await assistantOrg();
    const [optedOut, late] = phones(2) as [string, string];
    // The job is queued; before it is claimed the contact opts out (a keyword runs nothing else).
    await inbound(h, channelId, optedOut, 'opening hours?');
    await inbound(h, channelId, optedOut, 'STOP');
    await answerAll();
    const first = await conversationOf(key, optedOut);
    expect((await messagesOf(h, key, first.id)).map((m) => m.sender)).toEqual(['contact', 'contact']);
    // The job is queued; it is claimed after the contact's 24 hours have passed (the window's start moved back).
    await inbound(h, channelId, late, 'opening hours?');
    const second = await conversationOf(key, late);
    await sql`update conversations set last_inbound_at = now() - interval '25 hours'
      where org_id = ${orgId} and id = ${second.id}`.execute(h.database.db);
    await answerAll();
    expect((await messagesOf(h, key, second.id)).map((m) => m.sender)).toEqual(['contact']);
    // Neither is handed off: the assistant still owns both, and says nothing.
    expect(await conversationOf(key, late)).toMatchObject({ assignee: { type: 'ai' } });
    expect(await conversationOf(key, optedOut)).toMatchObject({ assignee: { type: 'ai' } });
  });

  it('does not serve numbers it was not given, nor in draft mode', async () => {
    const { key, channelId } = await assistantOrg({ mode: 'draft' });
    const [phone] = phones(1) as [string];
    await inbound(h, channelId, phone, 'opening hours?');
    expect(await conversationOf(key, phone)).toMatchObject({ status: 'open', assignee: null });
    expect(await h.wiring.assistantJobs.runOnce()).toBe(0);
  });
});

describe('the autonomous assistant, a model', () => {
  it('never sends a private note to the model, and hands off at the reply limit without a call', async () => {
    const { key, channelId } = await assistantOrg({
      provider: { base_url: model.baseUrl, model: 'm' },
      max_replies_per_conversation: 1,
    });
    // A rule writes a private note on every new conversation.
    await h.api('POST', '/v1/automation-rules', {
      key,
      body: {
        name: 'note',
        event: 'conversation.created',
        actions: [{ type: 'add_note', text: 'SECRET internal remark' }],
      },
    });
    const [phone] = phones(1) as [string];
    await inbound(h, channelId, phone, 'hi there');
    model.script(answer({ action: 'reply', text: 'Hello! How can I help?' }));
    const before = model.requests.length;
    await answerAll();
    expect(model.requests.length).toBe(before + 1);
    const request = model.requests.at(-1);
    expect(JSON.stringify(request?.body.messages)).not.toContain('SECRET');
    expect(request?.body.messages.slice(1)).toEqual([{ role: 'user', content: 'hi there' }]);

    await inbound(h, channelId, phone, 'and another question');
    await answerAll();
    expect(model.requests.length).toBe(before + 1); // no call at the limit
    const conversation = await conversationOf(key, phone);
    expect(conversation.assignee).toBeNull();
    const texts = (await messagesOf(h, key, conversation.id, { oldestFirst: true })).map((m) => m.text);
    expect(texts.at(-1)).toBe('AI handed off: reply_limit');
  });

  it('leases a job for four times the model’s deadline, so a dead worker’s job comes back that soon (D269)', async () => {
    const { orgId, channelId } = await assistantOrg({ provider: { base_url: model.baseUrl, model: 'm' } });
    const [phone] = phones(1) as [string];
    await inbound(h, channelId, phone, 'hello');
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    model.script({ content: JSON.stringify({ action: 'reply', text: 'Hi' }), after: gate });
    const before = model.requests.length;
    const running = answerAll();
    await waitUntil(() => model.requests.length > before, { message: 'the model call' });
    // The harness's deadline is 500 ms: the lease 2 s (it was 120 s whatever the deadline).
    const { rows } = await sql<{ ms: number }>`select extract(epoch from lease_until - now())::float8 * 1000 as ms
      from assistant_jobs where org_id = ${orgId}`.execute(h.database.db);
    release();
    await running;
    expect(rows).toHaveLength(1);
    expect(rows[0]?.ms).toBeGreaterThan(0);
    expect(rows[0]?.ms).toBeLessThanOrEqual(2000);
  });

  it('drops the answer when a person is assigned while the model is thinking', async () => {
    const { orgId, key, channelId } = await assistantOrg({ provider: { base_url: model.baseUrl, model: 'm' } });
    const user = await addUser(h, orgId);
    const [phone] = phones(1) as [string];
    await inbound(h, channelId, phone, 'hello');
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    model.script({ content: JSON.stringify({ action: 'reply', text: 'Too late' }), after: gate });
    const before = model.requests.length;
    const running = answerAll();
    await waitUntil(() => model.requests.length > before, { message: 'the model call' });
    const conversation = await conversationOf(key, phone);
    const taken = await h.api('PATCH', `/v1/conversations/${conversation.id}`, {
      key,
      body: { assignee: { type: 'user', id: user } },
    });
    expect(taken.status).toBe(200);
    release();
    await running;
    expect((await messagesOf(h, key, conversation.id, { oldestFirst: true })).map((m) => m.sender)).toEqual([
      'contact',
    ]);
    expect(await conversationOf(key, phone)).toMatchObject({ assignee: { type: 'user', id: user } });
  });

  it('answers one conversation one message at a time: its next job waits while a call is in flight', async () => {
    const { key, channelId } = await assistantOrg({ provider: { base_url: model.baseUrl, model: 'm' } });
    const [phone] = phones(1) as [string];
    await inbound(h, channelId, phone, 'first question');
    await inbound(h, channelId, phone, 'second question');
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    model.script({ content: JSON.stringify({ action: 'reply', text: 'First answer' }), after: gate });
    model.script(answer({ action: 'reply', text: 'Second answer' }));
    const before = model.requests.length;
    const first = h.wiring.assistantJobs.runOnce();
    await waitUntil(() => model.requests.length > before, { message: 'the first call' });
    // Another worker finds nothing to claim: the conversation's second job waits for the first.
    expect(await h.wiring.assistantJobs.runOnce()).toBe(0);
    release();
    expect(await first).toBe(1);
    expect(await h.wiring.assistantJobs.runOnce()).toBe(1);
    expect(model.requests.length).toBe(before + 2); // one call per contact message
    const conversation = await conversationOf(key, phone);
    const texts = (await messagesOf(h, key, conversation.id, { oldestFirst: true }))
      .filter((m) => m.sender === 'ai')
      .map((m) => m.text);
    expect(texts).toEqual(['First answer', 'Second answer']);
  });

  it.each([
    ['garbage', { content: 'Sure, we open at 8!' }],
    ['HTTP 500', { status: 500 }],
    ['a timeout', { hang: true as const }],
  ])('hands off with provider_error on %s', async (_label, scripted) => {
    const { key, channelId } = await assistantOrg({ provider: { base_url: model.baseUrl, model: 'm' } });
    const [phone] = phones(1) as [string];
    await inbound(h, channelId, phone, 'hello');
    model.script(scripted);
    await answerAll();
    const conversation = await conversationOf(key, phone);
    expect(conversation).toMatchObject({ status: 'open', assignee: null });
    expect((await messagesOf(h, key, conversation.id, { oldestFirst: true })).map((m) => [m.sender, m.text])).toEqual([
      ['contact', 'hello'],
      ['ai', 'Let me get a person to help you.'],
      ['system', 'AI handed off: provider_error'],
    ]);
  });

  it('resolves and keeps the assistant; the next message reopens it as pending', async () => {
    const { orgId, key, channelId } = await assistantOrg({ provider: { base_url: model.baseUrl, model: 'm' } });
    const [phone] = phones(1) as [string];
    await inbound(h, channelId, phone, 'thanks, that was all');
    model.script(answer({ action: 'resolve', text: 'Have a nice day!' }));
    await answerAll();
    const resolved = await conversationOf(key, phone);
    expect(resolved).toMatchObject({ status: 'resolved', assignee: { type: 'ai' } });
    // A resolution is a conversation.updated (decisions §20's events).
    const updates = (await eventsOf(h, orgId, 'conversation.updated')).filter(
      (data) => data.conversation.id === resolved.id,
    );
    expect(updates.at(-1)).toMatchObject({ conversation: { status: 'resolved' }, changed: ['status'] });
    await inbound(h, channelId, phone, 'one more thing');
    expect(await conversationOf(key, phone)).toMatchObject({ status: 'pending', assignee: { type: 'ai' } });
  });
});
