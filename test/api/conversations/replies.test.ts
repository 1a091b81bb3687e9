// decisions §15, POST /v1/conversations/{id}/messages: text, media and template replies, the refusals in their
// decided order (nothing queued, nothing charged on a refusal), charging and the 24-hour limit, `reply_to`,
// `sender` and the Idempotency-Key (with its concurrency test).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../helpers/clock.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { balanceOf, messagesOf } from '../../helpers/messages.ts';
import { approvedTemplate, POSITIONAL_BODY, phones, sender } from '../../helpers/sends.ts';

const DAY = 24 * 60 * 60 * 1000;
const clock = manualClock(Date.parse('2030-04-01T10:00:00.000Z'));
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]);
const OGG = Buffer.concat([Buffer.from('OggS'), Buffer.alloc(64, 2)]);
let h: Harness;
let media: Server;
let mediaBase: string;

beforeAll(async () => {
  h = await startHarness({ unlimited: true, clock });
  media = createServer((request, response) => {
    if (request.url === '/ok.png') {
      response.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length });
      return response.end(PNG);
    }
    if (request.url === '/voice.ogg') {
      response.writeHead(200, { 'content-type': 'audio/ogg; codecs=opus', 'content-length': OGG.length });
      return response.end(OGG);
    }
    if (request.url === '/big.ogg') {
      response.writeHead(200, { 'content-type': 'audio/ogg', 'content-length': String(17 * 1024 * 1024) });
      return response.end(OGG);
    }
    if (request.url === '/terms.pdf') {
      const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(64, 3)]);
      response.writeHead(200, { 'content-type': 'application/pdf', 'content-length': pdf.length });
      return response.end(pdf);
    }
    if (request.url === '/page.html') {
      response.writeHead(200, { 'content-type': 'text/html' });
      return response.end('<html></html>');
    }
    response.writeHead(404);
    response.end();
  });
  await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
  mediaBase = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => media.close(() => resolve()));
  await h.close();
});

/** An organization with a number, an approved template and a conversation its contact opened just now. */
async function conversation(options: Parameters<typeof sender>[1] & { phone?: string } = {}) {
  const setup = await sender(h, options);
  const channelId = setup.account.numbers[0].id as string;
  const phone = options.phone ?? (phones(1)[0] as string);
  const inbound = await h.admin('POST', '/sandbox/inbound', { channel_id: channelId, from: phone, text: 'hello' });
  expect(inbound.status).toBe(200);
  const list = await h.api('GET', `/v1/conversations?channel_id=${channelId}`, { key: setup.key });
  const conversationId = list.body.items[0].id as string;
  const messages = await h.api('GET', `/v1/conversations/${conversationId}/messages`, { key: setup.key });
  return { ...setup, channelId, phone, conversationId, inboundId: messages.body.items[0].id as string };
}

const reply = (key: string, conversationId: string, body: unknown, headers: Record<string, string> = {}) =>
  h.api('POST', `/v1/conversations/${conversationId}/messages`, { key, body, headers });

const drain = async () => {
  let total = 0;
  for (let handled = await h.wiring.replies.runOnce(); handled > 0; handled = await h.wiring.replies.runOnce()) {
    total += handled;
  }
  return total;
};

const queued = async (orgId: string) =>
  Number(
    (
      await h.database.db
        .selectFrom('reply_handoffs')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('org_id', '=', orgId)
        .executeTakeFirstOrThrow()
    ).n,
  );

const windowPhones = async (orgId: string) =>
  (
    await h.database.db
      .selectFrom('messaging_window_phones')
      .select('phone')
      .where('org_id', '=', orgId)
      .where('last_queued_at', '>', new Date(Date.now() - DAY))
      .execute()
  ).map((row) => row.phone);

describe('a text reply inside the window', () => {
  it('answers 202 with the Message (sending), free, and the worker hands it off: sent, with the platform id', async () => {
    const c = await conversation({ balance: 10 });
    const answered = await reply(c.key, c.conversationId, { type: 'text', text: 'Your order ships today.' });
    expect(answered.status).toBe(202);
    expect(answered.body).toMatchObject({
      conversation_id: c.conversationId,
      contact_id: expect.any(String),
      channel_id: c.channelId,
      direction: 'outbound',
      sender: 'agent',
      type: 'text',
      text: 'Your order ships today.',
      template_id: null,
      phone: c.phone,
      platform_message_id: null,
      status: 'sending',
      error: null,
      media: null,
      reply_to: null,
    });
    expect(await queued(c.org.id)).toBe(1);
    expect(await drain()).toBe(1);
    const [newest] = await messagesOf(h, c.key, c.conversationId);
    expect(newest).toMatchObject({ id: answered.body.id, status: 'sent', platform_message_id: expect.any(String) });
    expect(newest.sent_at).not.toBeNull();
    expect(await queued(c.org.id)).toBe(0);
    // decisions §15: free inside the window, and not counted against the 24-hour limit.
    expect(await balanceOf(h, c.account.id)).toBe(10);
    expect(await windowPhones(c.org.id)).toEqual([]);
  });

  it('takes `sender: "ai"` and `reply_to` a message of the conversation', async () => {
    const c = await conversation();
    const answered = await reply(c.key, c.conversationId, {
      type: 'text',
      text: 'Yes',
      sender: 'ai',
      reply_to: c.inboundId,
      preview_url: true,
    });
    expect(answered.status).toBe(202);
    expect(answered.body).toMatchObject({ sender: 'ai', reply_to: c.inboundId });
    const row = await h.database.db
      .selectFrom('reply_handoffs')
      .select('request')
      .where('org_id', '=', c.org.id)
      .executeTakeFirstOrThrow();
    const inbound = (await messagesOf(h, c.key, c.conversationId)).find((message) => message.id === c.inboundId);
    // The platform is told which of its messages this one answers (`context.message_id`).
    expect((row.request as any).message).toMatchObject({
      kind: 'freeform',
      body: { type: 'text', text: 'Yes', previewUrl: true },
      replyToPlatformMessageId: inbound.platform_message_id,
    });
    await drain();
  });
});

describe('media replies', () => {
  it('fetches the URL like header media and answers the Message with its media; audio takes no caption', async () => {
    const c = await conversation();
    const image = await reply(c.key, c.conversationId, {
      type: 'image',
      media_url: `${mediaBase}/ok.png`,
      caption: 'Your receipt',
    });
    expect(image.status).toBe(202);
    expect(image.body).toMatchObject({
      type: 'image',
      text: 'Your receipt',
      media: { mime_type: 'image/png', filename: null, caption: 'Your receipt', url: `${mediaBase}/ok.png` },
    });
    const audio = await reply(c.key, c.conversationId, { type: 'audio', media_url: `${mediaBase}/voice.ogg` });
    expect(audio.status).toBe(202);
    expect(audio.body.media).toMatchObject({ mime_type: 'audio/ogg', caption: null });
    const document = await reply(c.key, c.conversationId, {
      type: 'document',
      media_url: `${mediaBase}/terms.pdf`,
      filename: 'terms.pdf',
      caption: 'Our terms',
    });
    expect(document.status).toBe(202);
    expect(document.body.media).toEqual({
      mime_type: 'application/pdf',
      filename: 'terms.pdf',
      caption: 'Our terms',
      url: `${mediaBase}/terms.pdf`,
    });
    expect(await drain()).toBe(3);
    const sent = await messagesOf(h, c.key, c.conversationId);
    expect(
      sent
        .filter((message) => message.status === 'sent')
        .map((message) => message.id)
        .sort(),
    ).toEqual([document.body.id, audio.body.id, image.body.id].sort());
  });

  it('422 with the header media codes; caption on audio and filename on an image are body errors', async () => {
    const c = await conversation();
    for (const [url, type, code] of [
      [`${mediaBase}/missing.png`, 'image', 'media_fetch_failed'],
      [`${mediaBase}/page.html`, 'image', 'media_type_mismatch'],
      [`${mediaBase}/ok.png`, 'video', 'media_type_mismatch'],
      [`${mediaBase}/big.ogg`, 'audio', 'media_too_large'],
    ] as const) {
      const refused = await reply(c.key, c.conversationId, { type, media_url: url });
      expect(refused.status, `${type} ${url}`).toBe(422);
      expect(refused.body.detail).toMatchObject({ code, url });
    }
    const caption = await reply(c.key, c.conversationId, {
      type: 'audio',
      media_url: `${mediaBase}/voice.ogg`,
      caption: 'x',
    });
    expect(caption.status).toBe(422);
    expect(caption.body.detail[0].loc).toEqual(['body', 'caption']);
    const filename = await reply(c.key, c.conversationId, {
      type: 'image',
      media_url: `${mediaBase}/ok.png`,
      filename: 'a.png',
    });
    expect(filename.body.detail[0].loc).toEqual(['body', 'filename']);
    expect(await queued(c.org.id)).toBe(0);
  });
});

describe('refusals in the decided order', () => {
  it('404 for an unknown conversation or one of another organization, before a bad body', async () => {
    const c = await conversation();
    const other = await conversation();
    expect((await reply(c.key, 'conv_unknown', { type: 'text' })).status).toBe(404);
    const foreign = await reply(c.key, other.conversationId, { type: 'text', text: 'hi' });
    expect(foreign.status).toBe(404);
    expect(foreign.body.detail).toBe('not_found');
    expect(await queued(other.org.id)).toBe(0);
  });

  it('422 for the body: a missing text, too long a text, an unknown type, a field of another type, reply_to', async () => {
    const c = await conversation();
    const other = await conversation();
    const missing = await reply(c.key, c.conversationId, { type: 'text' });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({ loc: ['body', 'text'], type: 'missing' });
    expect((await reply(c.key, c.conversationId, { type: 'text', text: 'x'.repeat(4097) })).status).toBe(422);
    expect((await reply(c.key, c.conversationId, { type: 'text', text: '' })).status).toBe(422);
    expect((await reply(c.key, c.conversationId, { type: 'sticker', text: 'x' })).status).toBe(422);
    expect((await reply(c.key, c.conversationId, { type: 'text', text: 'x', sender: 'system' })).status).toBe(422);
    const mixed = await reply(c.key, c.conversationId, { type: 'text', text: 'x', template_id: 'tpl_x' });
    expect(mixed.body.detail[0].loc).toEqual(['body', 'template_id']);
    // reply_to: a message of another conversation (even of the same organization) is refused on its field.
    const elsewhere = await reply(c.key, c.conversationId, { type: 'text', text: 'x', reply_to: other.inboundId });
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.detail[0]).toMatchObject({ loc: ['body', 'reply_to'] });
    expect((await reply(c.key, c.conversationId, { type: 'text', text: 'x', reply_to: 'msg_nope' })).status).toBe(422);
    expect(await queued(c.org.id)).toBe(0);
  });

  it('409 channel_unavailable once the number is removed, before the closed window', async () => {
    const c = await conversation({ numbers: [{ phone: '+15550100001' }, { phone: '+15550100002' }] });
    clock.advance(DAY + 1000);
    await h.admin('DELETE', `/messaging-accounts/${c.account.id}/numbers/${c.channelId}`);
    const refused = await reply(c.key, c.conversationId, { type: 'text', text: 'hi' });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatchObject({ code: 'channel_unavailable' });
    // ...but a bad body is a 422 first.
    expect((await reply(c.key, c.conversationId, { type: 'text' })).status).toBe(422);
    expect(await queued(c.org.id)).toBe(0);
  });

  it('409 conversation_window_closed for text and media 24 hours after the contact’s newest message', async () => {
    const c = await conversation();
    const opened = clock.now();
    clock.advance(DAY - 1000);
    expect((await reply(c.key, c.conversationId, { type: 'text', text: 'still open' })).status).toBe(202);
    clock.advance(1000);
    for (const body of [
      { type: 'text', text: 'too late' },
      { type: 'image', media_url: `${mediaBase}/ok.png` },
    ]) {
      const refused = await reply(c.key, c.conversationId, body);
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toEqual({
        code: 'conversation_window_closed',
        last_inbound_at: opened.toISOString(),
        window_expires_at: new Date(opened.getTime() + DAY).toISOString(),
      });
    }
    expect(await queued(c.org.id)).toBe(1);
    await drain();
    // A new message from the contact opens it again.
    await h.admin('POST', '/sandbox/inbound', { channel_id: c.channelId, from: c.phone, text: 'back' });
    expect((await reply(c.key, c.conversationId, { type: 'text', text: 'welcome back' })).status).toBe(202);
    await drain();
  });

  it('a conversation opened by a broadcast (no inbound message) has its window closed', async () => {
    const setup = await sender(h);
    const [phone] = phones(1);
    const sent = await h.api('POST', `/v1/templates/${setup.template.id}/send`, {
      key: setup.key,
      body: { recipients: [{ phone, variables: { 'body.1': '1' } }] },
    });
    expect(sent.status).toBe(202);
    await h.fanout.drain();
    const list = await h.api('GET', '/v1/conversations', { key: setup.key });
    const refused = await reply(setup.key, list.body.items[0].id, { type: 'text', text: 'hi' });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toEqual({
      code: 'conversation_window_closed',
      last_inbound_at: null,
      window_expires_at: null,
    });
  });
});

describe('template replies', () => {
  it('inside the window: charged at the category’s price, not counted against the 24-hour limit', async () => {
    const c = await conversation({ balance: 10, prices: { UTILITY: 2 } });
    const answered = await reply(c.key, c.conversationId, {
      type: 'template',
      template_id: c.template.id,
      variables: { 'body.1': '4417' },
    });
    expect(answered.status).toBe(202);
    expect(answered.body).toMatchObject({ type: 'template', template_id: c.template.id, text: 'Your code is 4417' });
    expect(await balanceOf(h, c.account.id)).toBe(8);
    expect(await windowPhones(c.org.id)).toEqual([]);
    await drain();
    const [newest] = await messagesOf(h, c.key, c.conversationId);
    expect(newest).toMatchObject({ id: answered.body.id, status: 'sent' });
  });

  it('outside the window: charged and counted; the limit and then the balance refuse, charging nothing', async () => {
    const c = await conversation({ balance: 3, prices: { UTILITY: 2 }, limit: 1 });
    clock.advance(DAY);
    const body = { type: 'template', template_id: c.template.id, variables: { 'body.1': '1' } };
    expect((await reply(c.key, c.conversationId, body)).status).toBe(202);
    expect(await windowPhones(c.org.id)).toEqual([c.phone]);
    expect(await balanceOf(h, c.account.id)).toBe(1);
    // The same phone again does not take more room in the limit; the balance (1) cannot pay 2.
    const poor = await reply(c.key, c.conversationId, body);
    expect(poor.status).toBe(402);
    expect(poor.body.detail).toMatchObject({ code: 'messaging_insufficient_balance', price: 2 });
    // Another contact's conversation: the limit (1 phone, used) answers before the balance.
    const [second] = phones(1);
    await h.admin('POST', '/sandbox/inbound', { channel_id: c.channelId, from: second, text: 'hi' });
    clock.advance(DAY);
    const list = await h.api('GET', '/v1/conversations?limit=1', { key: c.key });
    const limited = await reply(c.key, list.body.items[0].id, body);
    expect(limited.status).toBe(409);
    expect(limited.body.detail).toMatchObject({ code: 'messaging_limit_exceeded', remaining: 0 });
    expect(await balanceOf(h, c.account.id)).toBe(1);
    expect(await queued(c.org.id)).toBe(1);
    await drain();
  });

  it('a counted template reply that fails leaves the 24-hour window, as a failed recipient does', async () => {
    const c = await conversation({ balance: 10, limit: 1, phone: `+1555${String(Date.now()).slice(-3)}0404` });
    clock.advance(DAY);
    const body = { type: 'template', template_id: c.template.id, variables: { 'body.1': '1' } };
    expect((await reply(c.key, c.conversationId, body)).status).toBe(202);
    expect(await windowPhones(c.org.id)).toEqual([c.phone]);
    // Another contact's conversation, outside its window: the limit (1 phone) is used...
    const [second] = phones(1);
    await h.admin('POST', '/sandbox/inbound', { channel_id: c.channelId, from: second, text: 'hi' });
    clock.advance(DAY);
    const list = await h.api('GET', '/v1/conversations?limit=1', { key: c.key });
    expect((await reply(c.key, list.body.items[0].id, body)).status).toBe(409);
    // ...until the first fails at the platform (not on the network): its place in the window is given back.
    await drain();
    const [failed] = await messagesOf(h, c.key, c.conversationId);
    expect(failed).toMatchObject({ status: 'failed', error: 'not_on_network' });
    expect((await reply(c.key, list.body.items[0].id, body)).status).toBe(202);
    expect(await windowPhones(c.org.id)).toEqual([second]);
    await drain();
  });

  it('the template as for one send recipient: missing/unknown variables, not sendable, other account', async () => {
    const c = await conversation();
    const missing = await reply(c.key, c.conversationId, { type: 'template', template_id: c.template.id });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toEqual({ code: 'missing_variables', tokens: ['body.1'] });
    const unknown = await reply(c.key, c.conversationId, {
      type: 'template',
      template_id: c.template.id,
      variables: { 'body.1': 'x', 'body.9': 'y' },
    });
    expect(unknown.body.detail).toMatchObject({ code: 'unknown_variables', keys: ['body.9'] });
    await h.admin('POST', `/sandbox/templates/${c.template.id}/review`, { event: 'PAUSED' });
    const paused = await reply(c.key, c.conversationId, {
      type: 'template',
      template_id: c.template.id,
      variables: { 'body.1': 'x' },
    });
    expect(paused.status).toBe(409);
    expect(paused.body.detail).toMatchObject({ code: 'template_not_sendable' });
    const other = await sender(h);
    const foreign = await reply(c.key, c.conversationId, { type: 'template', template_id: other.template.id });
    expect(foreign.status).toBe(404);
    expect(await queued(c.org.id)).toBe(0);
  });

  it('409 contact_opted_out for a MARKETING template to an opted-out contact; UTILITY still goes', async () => {
    const c = await conversation({ balance: 10 });
    const marketing = await approvedTemplate(h, c.key, POSITIONAL_BODY, { category: 'MARKETING' });
    await h.admin('POST', '/sandbox/inbound', { channel_id: c.channelId, from: c.phone, text: 'STOP' });
    const variables = { 'body.1': '1' };
    const refused = await reply(c.key, c.conversationId, { type: 'template', template_id: marketing.id, variables });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toEqual({ code: 'contact_opted_out' });
    expect(await balanceOf(h, c.account.id)).toBe(10);
    const utility = await reply(c.key, c.conversationId, {
      type: 'template',
      template_id: c.template.id,
      variables: { 'body.1': '1' },
    });
    expect(utility.status).toBe(202);
    await drain();
  });
});

describe('Idempotency-Key', () => {
  it('replays the same message, refuses another body, and 20 concurrent requests with one key make one message', async () => {
    const c = await conversation();
    const body = { type: 'text', text: 'once' };
    const first = await reply(c.key, c.conversationId, body, { 'idempotency-key': 'reply-1' });
    expect(first.status).toBe(202);
    const again = await reply(c.key, c.conversationId, body, { 'idempotency-key': 'reply-1' });
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    const reused = await reply(
      c.key,
      c.conversationId,
      { type: 'text', text: 'other' },
      { 'idempotency-key': 'reply-1' },
    );
    expect(reused.status).toBe(422);
    expect(reused.body.detail).toEqual({ code: 'idempotency_key_reused' });

    const burst = await Promise.all(
      Array.from({ length: 20 }, () =>
        reply(c.key, c.conversationId, { type: 'text', text: 'burst' }, { 'idempotency-key': 'reply-burst' }),
      ),
    );
    const accepted = burst.filter((answer) => answer.status === 202);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    expect(new Set(accepted.map((answer) => answer.body.id)).size).toBe(1);
    for (const answer of burst.filter((item) => item.status !== 202)) {
      expect(answer.status).toBe(409);
      expect(answer.body.detail).toEqual({ code: 'idempotency_key_in_flight' });
    }
    const burstMessages = (await messagesOf(h, c.key, c.conversationId)).filter((message) => message.text === 'burst');
    expect(burstMessages).toHaveLength(1);
    expect(await queued(c.org.id)).toBe(2);
    // A refused request released its key: corrected, it goes through.
    const refused = await reply(c.key, c.conversationId, { type: 'text' }, { 'idempotency-key': 'reply-2' });
    expect(refused.status).toBe(422);
    const corrected = await reply(c.key, c.conversationId, body, { 'idempotency-key': 'reply-2' });
    expect(corrected.status).toBe(202);
    await drain();
  });
});
