// decisions §15, media both ways through the sandbox: inbound image, video, audio, document and sticker messages
// (`media`, caption as `text`, `reply_to` from the platform's context), `message.received` with `media`, and
// GET /v1/conversations/{id}/messages/{id}/media streaming the file with its type, for inbound files (fetched by the
// sandbox from `media_url` when asked) and outbound ones (fetched again from the URL they were sent by).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { inbound, messagesOf } from '../../helpers/messages.ts';
import { phones } from '../../helpers/sends.ts';
import { startWebhookReceiver, verify, type WebhookReceiver } from '../../helpers/webhook-receiver.ts';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(300, 1)]);
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(5000, 3)]);
const OGG = Buffer.concat([Buffer.from('OggS'), Buffer.alloc(100, 2)]);
let h: Harness;
let receiver: WebhookReceiver;
let files: Server;
let base: string;
const hits = new Map<string, number>();

beforeAll(async () => {
  [h, receiver] = await Promise.all([startHarness({ unlimited: true }), startWebhookReceiver()]);
  files = createServer((request, response) => {
    const path = request.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const send = (type: string, body: Buffer) => {
      response.writeHead(200, { 'content-type': type, 'content-length': body.length });
      response.end(body);
    };
    if (path === '/photo.png') return send('image/png', PNG);
    if (path === '/contract') return send('application/pdf', PDF);
    if (path === '/voice.ogg') return send('audio/ogg', OGG);
    if (path === '/sticker') return send('image/webp', PNG);
    response.writeHead(404);
    response.end();
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => files.close(() => resolve()));
  await receiver.close();
  await h.close();
});

async function setup() {
  const { org, key } = await h.createOrg();
  const account = await h.createAccount(org.id);
  return { key, channelId: account.numbers[0].id as string, phone: phones(1)[0] as string };
}

/** The organization's one conversation and its messages, newest first. */
async function conversationOf(key: string) {
  const conversation = (await h.api('GET', '/v1/conversations', { key })).body.items[0];
  return { conversationId: conversation.id as string, messages: await messagesOf(h, key, conversation.id) };
}

/** Whether the OpenAPI document lists a download's `Content-Type` (D225): the range of its type. */
async function documented(contentType: unknown) {
  const document = (await h.api('GET', '/v1/openapi.json')).body;
  const content = document.paths['/v1/conversations/{conversation_id}/messages/{message_id}/media'].get.responses['200']
    .content as Record<string, unknown>;
  const type =
    String(contentType ?? '')
      .split(';')[0]
      ?.trim() ?? '';
  return Object.keys(content).some(
    (range) => range === type || (range.endsWith('/*') && type.startsWith(range.slice(0, -1))),
  );
}

const mediaPath = (conversationId: string, messageId: string) =>
  `/v1/conversations/${conversationId}/messages/${messageId}/media`;

describe('inbound media', () => {
  it('stores an image with its caption as text, emits message.received with media, and streams its bytes', async () => {
    const { key, channelId, phone } = await setup();
    const created = await h.api('POST', '/v1/webhook-endpoints', {
      key,
      body: { url: `${receiver.baseUrl}/media-events`, events: ['message.received'] },
    });
    const delivered = await inbound(h, {
      channel_id: channelId,
      from: phone,
      type: 'image',
      media_url: `${base}/photo.png`,
      caption: 'The bill for March',
    });
    expect(delivered.status).toBe(200);
    // the platform-shaped webhook the sandbox delivered: the file under its type's key
    const wire = delivered.body.webhook.entry[0].changes[0].value.messages[0];
    expect(wire).toMatchObject({ type: 'image', image: { mime_type: 'image/png', caption: 'The bill for March' } });
    expect(hits.get('/photo.png') ?? 0).toBe(0); // the sandbox fetches only when asked

    const { conversationId, messages } = await conversationOf(key);
    expect(messages[0]).toMatchObject({
      direction: 'inbound',
      type: 'image',
      text: 'The bill for March',
      media: { mime_type: 'image/png', filename: null, caption: 'The bill for March', url: null },
      reply_to: null,
    });
    await h.deliveries.drain();
    const events = receiver.at('/media-events').map((request) => verify(created.body.secret, request));
    expect(events).toHaveLength(1);
    expect(events[0].data).toEqual(messages[0]);

    const file = await h.api('GET', mediaPath(conversationId, messages[0].id), { key });
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('image/png');
    expect(await documented(file.headers['content-type'])).toBe(true);
    expect(file.headers['content-length']).toBe(String(PNG.length));
    expect(file.headers['content-disposition']).toBe('attachment');
    expect(file.headers['x-content-type-options']).toBe('nosniff');
    const raw = await h.app.inject({
      method: 'GET',
      url: mediaPath(conversationId, messages[0].id),
      headers: { authorization: `Bearer ${key}` },
    });
    expect(raw.rawPayload.equals(PNG)).toBe(true);
    expect(hits.get('/photo.png')).toBe(2);
  });

  it('names a document’s file, announces each type’s usual format, and takes a given mime type', async () => {
    const { key, channelId, phone } = await setup();
    const sent = [
      { type: 'document', media_url: `${base}/contract`, filename: 'Contrato año 2025.pdf', caption: 'Signed' },
      { type: 'audio', media_url: `${base}/voice.ogg` },
      { type: 'sticker', media_url: `${base}/sticker` },
      { type: 'video', media_url: `${base}/clip`, mime_type: 'video/3gpp' },
    ];
    for (const body of sent)
      expect((await inbound(h, { channel_id: channelId, from: phone, ...body })).status).toBe(200);
    const { conversationId, messages } = await conversationOf(key);
    const [video, sticker, audio, document] = messages;
    expect(document).toMatchObject({
      type: 'document',
      text: 'Signed',
      media: { mime_type: 'application/pdf', filename: 'Contrato año 2025.pdf', caption: 'Signed', url: null },
    });
    expect(audio).toMatchObject({ type: 'audio', text: null, media: { mime_type: 'audio/ogg', caption: null } });
    expect(sticker).toMatchObject({ type: 'sticker', media: { mime_type: 'image/webp' } });
    expect(video).toMatchObject({ type: 'video', media: { mime_type: 'video/3gpp' } });

    const file = await h.app.inject({
      method: 'GET',
      url: mediaPath(conversationId, document.id),
      headers: { authorization: `Bearer ${key}` },
    });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('application/pdf');
    expect(await documented(file.headers['content-type'])).toBe(true);
    expect(file.headers['content-disposition']).toBe(
      `attachment; filename*=UTF-8''${encodeURIComponent('Contrato año 2025.pdf')}`,
    );
    expect(file.rawPayload.equals(PDF)).toBe(true);
  });

  it('resolves the message a reply answers to our id, in this conversation only', async () => {
    const { key, channelId, phone } = await setup();
    const first = await inbound(h, { channel_id: channelId, from: phone, text: 'first' });
    await inbound(h, {
      channel_id: channelId,
      from: phone,
      text: 'answering the first',
      reply_to_platform_message_id: first.body.platform_message_id,
    });
    await inbound(h, {
      channel_id: channelId,
      from: phone,
      text: 'unknown',
      reply_to_platform_message_id: 'wamid.nope',
    });
    // another contact's message is not this conversation's
    const other = phones(1)[0] as string;
    await inbound(h, {
      channel_id: channelId,
      from: other,
      text: 'not yours',
      reply_to_platform_message_id: first.body.platform_message_id,
    });
    const list = (await h.api('GET', '/v1/conversations', { key })).body.items as any[];
    const mine = list.find((item) => item.contact_id !== undefined && item.unread_count === 3);
    const messages = (await h.api('GET', `/v1/conversations/${mine.id}/messages`, { key })).body.items;
    const [unknown, answer, original] = messages;
    expect(answer).toMatchObject({ text: 'answering the first', reply_to: original.id });
    expect(unknown.reply_to).toBeNull();
    const theirs = list.find((item) => item.id !== mine.id);
    const otherMessages = (await h.api('GET', `/v1/conversations/${theirs.id}/messages`, { key })).body.items;
    expect(otherMessages[0].reply_to).toBeNull();
  });

  it('refuses an inbound body that breaks the platform’s rules (422) and delivers nothing', async () => {
    const { key, channelId, phone } = await setup();
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [{ type: 'image' }, ['body', 'media_url']],
      [{ type: 'image', media_url: `${base}/photo.png`, text: 'hi' }, ['body', 'text']],
      [{ type: 'audio', media_url: `${base}/voice.ogg`, caption: 'no' }, ['body', 'caption']],
      [{ type: 'sticker', media_url: `${base}/sticker`, caption: 'no' }, ['body', 'caption']],
      [{ type: 'image', media_url: `${base}/photo.png`, filename: 'a.png' }, ['body', 'filename']],
      [{ text: 'hi', caption: 'no' }, ['body', 'caption']],
      [{}, ['body', 'text']],
      [{ type: 'gif', media_url: `${base}/photo.png` }, ['body', 'type']],
      [{ type: 'image', media_url: 'file:///etc/passwd' }, ['body', 'media_url']],
    ];
    for (const [body, loc] of cases) {
      const refused = await inbound(h, { channel_id: channelId, from: phone, ...body });
      expect(refused.status, JSON.stringify(body)).toBe(422);
      expect(refused.body.detail[0].loc).toEqual(loc);
    }
    expect((await h.api('GET', '/v1/conversations', { key })).body.items).toEqual([]);
  });
});

describe('GET …/messages/{message_id}/media', () => {
  it('answers 404 not_found for a message without media, an unknown one, or another organization’s', async () => {
    const { key, channelId, phone } = await setup();
    await inbound(h, { channel_id: channelId, from: phone, text: 'just text' });
    await inbound(h, { channel_id: channelId, from: phone, type: 'image', media_url: `${base}/photo.png` });
    const { conversationId, messages } = await conversationOf(key);
    const [image, text] = messages;
    const other = await setup();
    for (const [path, who] of [
      [mediaPath(conversationId, text.id), key],
      [mediaPath(conversationId, 'msg_unknown'), key],
      [mediaPath('conv_unknown', image.id), key],
      [mediaPath(conversationId, image.id), other.key],
    ] as const) {
      const answer = await h.api('GET', path, { key: who });
      expect(answer.status, path).toBe(404);
      expect(answer.body).toEqual({ detail: 'not_found' });
    }
    expect((await h.api('GET', mediaPath(conversationId, image.id), { key })).status).toBe(200);
  });

  it('answers 502 media_not_found when the file is gone and 503 media_unavailable when it cannot be reached', async () => {
    const { key, channelId, phone } = await setup();
    await inbound(h, { channel_id: channelId, from: phone, type: 'image', media_url: `${base}/deleted.png` });
    // a port nobody listens on
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await inbound(h, {
      channel_id: channelId,
      from: phone,
      type: 'image',
      media_url: `http://127.0.0.1:${deadPort}/x.png`,
    });
    const { conversationId, messages } = await conversationOf(key);
    const [unreachable, gone] = messages;

    const missing = await h.api('GET', mediaPath(conversationId, gone.id), { key });
    expect(missing.status).toBe(502);
    expect(missing.body.detail).toMatchObject({ code: 'media_not_found', source: 'platform' });
    const down = await h.api('GET', mediaPath(conversationId, unreachable.id), { key });
    expect(down.status).toBe(503);
    expect(down.body.detail).toMatchObject({ code: 'media_unavailable', source: 'platform' });
    expect(down.headers['retry-after']).toBe('5');
  });

  it('fetches the sandbox’s files under the service’s address policy', async () => {
    const strict = await startHarness({ unlimited: true, mediaFetchAllowHosts: [], database: h.database });
    try {
      const { org, key } = await strict.createOrg();
      const account = await strict.createAccount(org.id);
      const delivered = await strict.admin('POST', '/sandbox/inbound', {
        channel_id: account.numbers[0].id,
        from: phones(1)[0],
        type: 'image',
        media_url: `${base}/photo.png`,
      });
      expect(delivered.status).toBe(200);
      const conversation = (await strict.api('GET', '/v1/conversations', { key })).body.items[0];
      const [message] = (await strict.api('GET', `/v1/conversations/${conversation.id}/messages`, { key })).body.items;
      const before = hits.get('/photo.png') ?? 0;
      const refused = await strict.api('GET', mediaPath(conversation.id, message.id), { key });
      expect(refused.status).toBe(503);
      expect(refused.body.detail.message).toMatch(/private address/);
      expect(hits.get('/photo.png') ?? 0).toBe(before);
    } finally {
      await strict.close();
    }
  });

  it('answers an outbound media reply’s bytes, fetched again from the URL it was sent by', async () => {
    const { key, channelId, phone } = await setup();
    await inbound(h, { channel_id: channelId, from: phone, text: 'send me the contract' });
    const { conversationId } = await conversationOf(key);
    const replied = await h.api('POST', `/v1/conversations/${conversationId}/messages`, {
      key,
      body: { type: 'document', media_url: `${base}/contract`, filename: 'contract.pdf', caption: 'Here it is' },
    });
    expect(replied.status).toBe(202);
    expect(replied.body.media).toMatchObject({ url: `${base}/contract`, filename: 'contract.pdf' });
    const file = await h.app.inject({
      method: 'GET',
      url: mediaPath(conversationId, replied.body.id),
      headers: { authorization: `Bearer ${key}` },
    });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('application/pdf');
    expect(await documented(file.headers['content-type'])).toBe(true);
    expect(file.headers['content-disposition']).toBe("attachment; filename*=UTF-8''contract.pdf");
    expect(file.rawPayload.equals(PDF)).toBe(true);

    // a text reply has no file
    const text = await h.api('POST', `/v1/conversations/${conversationId}/messages`, {
      key,
      body: { type: 'text', text: 'and a note' },
    });
    expect((await h.api('GET', mediaPath(conversationId, text.body.id), { key })).status).toBe(404);
  });

  it('answers a type outside the documented ranges as application/octet-stream (D225)', async () => {
    const { key, channelId, phone } = await setup();
    const body = {
      type: 'document',
      media_url: `${base}/contract`,
      filename: 'scene.gltf',
      mime_type: 'model/gltf+json',
    };
    expect((await inbound(h, { channel_id: channelId, from: phone, ...body })).status).toBe(200);
    const { conversationId, messages } = await conversationOf(key);
    const file = await h.app.inject({
      method: 'GET',
      url: mediaPath(conversationId, messages[0].id),
      headers: { authorization: `Bearer ${key}` },
    });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('application/octet-stream');
    expect(await documented(file.headers['content-type'])).toBe(true);
    expect(file.rawPayload.equals(PDF)).toBe(true);
  });

  it('is documented as a binary answer with its error codes', async () => {
    const document = (await h.api('GET', '/v1/openapi.json')).body;
    const operation = document.paths['/v1/conversations/{conversation_id}/messages/{message_id}/media'].get;
    expect(operation.operationId).toBe('downloadConversationMessageMedia');
    expect(operation.security).toEqual([{ apiKey: ['conversations:read'] }]);
    const binary = { schema: { type: 'string', format: 'binary' } };
    expect(operation.responses['200'].content).toEqual({
      'image/*': binary,
      'video/*': binary,
      'audio/*': binary,
      'application/*': binary,
      'text/*': binary,
    });
    expect(operation.responses['502']['x-detail-codes']).toContain('media_not_found');
    expect(operation.responses['503']['x-detail-codes']).toEqual(
      expect.arrayContaining(['service_unavailable', 'media_unavailable']),
    );
    const message = document.components.schemas.Message;
    expect(Object.keys(message.properties)).toEqual(expect.arrayContaining(['media', 'reply_to']));
  });
});
