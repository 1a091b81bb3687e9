// decisions §19, files attached from the computer (D294): `POST /v1/files` stores a checked file (type by name or
// `mime_type`, the same leading bytes, the media size limits per kind) for the organization only; a reply sends it
// with `file_id`, and the hand-off gives its bytes to the platform (uploaded, then sent by media id); the message's
// media endpoint answers the stored bytes; another organization cannot use it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxPlatform } from '../../../src/messaging/sandbox/sandbox-platform.ts';
import { pruneExpiredFiles } from '../../../src/modules/files/files.service.ts';
import { manualClock } from '../../helpers/clock.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { openConversation } from '../../helpers/team-inbox.ts';

const clock = manualClock(Date.parse('2030-05-01T10:00:00.000Z'));
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(200, 7)]);
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(100, 3)]);
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true, clock });
});
afterAll(() => h.close());

let phones = 0;
async function setup() {
  const { org, key } = await h.createOrg();
  const account = await h.createAccount(org.id, { numbers: [{ phone: '+15550100001' }] });
  const channelId = account.numbers[0].id as string;
  const phone = `+1555800${String(++phones).padStart(4, '0')}`;
  const conversation = await openConversation(h, key, channelId, phone);
  return { orgId: org.id as string, key, channelId, phone, conversationId: conversation.id as string };
}

const upload = (key: string, body: unknown) => h.api('POST', '/v1/files', { key, body });
const reply = (key: string, conversationId: string, body: unknown) =>
  h.api('POST', `/v1/conversations/${conversationId}/messages`, { key, body });
const drain = async () => {
  while ((await h.wiring.replies.runOnce()) > 0);
};

describe('POST /v1/files', () => {
  it('stores a file of a type the platform takes, its type from the name or mime_type', async () => {
    const { key } = await setup();
    const image = await upload(key, { filename: 'receipt.png', data: PNG.toString('base64') });
    expect(image.status, image.text).toBe(201);
    expect(image.body).toEqual({
      id: expect.stringMatching(/^file_/),
      type: 'image',
      mime_type: 'image/png',
      filename: 'receipt.png',
      size: PNG.length,
      created_at: clock.now().toISOString(),
      expires_at: new Date(clock.now().getTime() + 30 * 24 * 60 * 60 * 1000).toISOString(),
    });
    expect((await h.api('GET', `/v1/files/${image.body.id}`, { key })).body).toEqual(image.body);
    const document = await upload(key, {
      filename: 'terms',
      mime_type: 'application/pdf',
      data: PDF.toString('base64'),
    });
    expect(document.body).toMatchObject({ type: 'document', mime_type: 'application/pdf', filename: 'terms' });
    const text = await upload(key, { filename: 'notes.txt', data: Buffer.from('plain words').toString('base64') });
    expect(text.body).toMatchObject({ type: 'document', mime_type: 'text/plain' });
  });

  it('refuses bytes that are not what they claim, a type the platform does not take, and files over the limit', async () => {
    const { key } = await setup();
    const mismatch = await upload(key, { filename: 'photo.png', data: PDF.toString('base64') });
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.detail).toMatchObject({ code: 'media_type_mismatch' });
    const html = await upload(key, { filename: 'page.html', data: Buffer.from('<html>').toString('base64') });
    expect(html.body.detail).toMatchObject({ code: 'media_type_mismatch' });
    // An image over 5 MB (a document of the same size is fine).
    const big = Buffer.concat([PNG, Buffer.alloc(5 * 1024 * 1024)]);
    const tooLarge = await upload(key, { filename: 'big.png', data: big.toString('base64') });
    expect(tooLarge.status, tooLarge.text.slice(0, 500)).toBe(422);
    expect(tooLarge.body.detail).toMatchObject({ code: 'media_too_large', limit: 5 * 1024 * 1024 });
    const bigPdf = Buffer.concat([PDF, Buffer.alloc(5 * 1024 * 1024)]);
    expect((await upload(key, { filename: 'big.pdf', data: bigPdf.toString('base64') })).status).toBe(201);
    const notBase64 = await upload(key, { filename: 'a.png', data: 'not base64!' });
    expect(notBase64.status).toBe(422);
    expect(notBase64.body.detail[0].loc).toEqual(['body', 'data']);
    const noType = await upload(key, { filename: 'mystery', data: PNG.toString('base64') });
    expect(noType.body.detail[0].loc).toEqual(['body', 'mime_type']);
    expect((await h.api('GET', '/v1/files/file_unknown', { key })).status).toBe(404);
  });
});

describe('a reply with an uploaded file', () => {
  it('reaches the platform with the file’s bytes (uploaded, then sent by media id); its media answers them', async () => {
    const { key, conversationId } = await setup();
    const file = (await upload(key, { filename: 'receipt.png', data: PNG.toString('base64') })).body;
    const sent = await reply(key, conversationId, { type: 'image', file_id: file.id, caption: 'Your receipt' });
    expect(sent.status, sent.text).toBe(202);
    expect(sent.body).toMatchObject({
      type: 'image',
      text: 'Your receipt',
      media: { mime_type: 'image/png', filename: 'receipt.png', caption: 'Your receipt', url: null, file_id: file.id },
    });
    await drain();
    const message = (await h.api('GET', `/v1/conversations/${conversationId}/messages`, { key })).body.items[0];
    expect(message).toMatchObject({ id: sent.body.id, status: 'sent' });
    const sandbox = h.messaging.platform as SandboxPlatform;
    const accepted = sandbox.acceptedMessage(message.platform_message_id);
    expect(accepted?.media).toMatchObject({ mimeType: 'image/png', filename: 'receipt.png' });
    expect(Buffer.compare(accepted?.media?.bytes as Buffer, PNG)).toBe(0);
    const bytes = await h.app.inject({
      method: 'GET',
      url: `/v1/conversations/${conversationId}/messages/${sent.body.id}/media`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(bytes.statusCode).toBe(200);
    expect(bytes.headers['content-type']).toContain('image/png');
    expect(Buffer.compare(bytes.rawPayload, PNG)).toBe(0);
  });

  it('refuses another organization’s file, a file of another type, and both a URL and a file', async () => {
    const mine = await setup();
    const theirs = await setup();
    const file = (await upload(theirs.key, { filename: 'receipt.png', data: PNG.toString('base64') })).body;
    const foreign = await reply(mine.key, mine.conversationId, { type: 'image', file_id: file.id });
    expect(foreign.status).toBe(422);
    expect(foreign.body.detail[0]).toMatchObject({ loc: ['body', 'file_id'] });
    expect((await h.api('GET', `/v1/files/${file.id}`, { key: mine.key })).status).toBe(404);
    const own = (await upload(mine.key, { filename: 'receipt.png', data: PNG.toString('base64') })).body;
    const wrongType = await reply(mine.key, mine.conversationId, { type: 'document', file_id: own.id });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.detail).toMatchObject({ code: 'media_type_mismatch', file_id: own.id });
    const both = await reply(mine.key, mine.conversationId, {
      type: 'image',
      file_id: own.id,
      media_url: 'https://example.com/a.png',
    });
    expect(both.status).toBe(422);
    expect(both.body.detail[0]).toMatchObject({ loc: ['body', 'file_id'] });
    const messages = (await h.api('GET', `/v1/conversations/${mine.conversationId}/messages`, { key: mine.key })).body;
    expect(messages.items).toHaveLength(1); // the contact's message only: nothing was queued
  });

  it('an expired file can no longer be sent, and retention removes its bytes (its message’s media: 502)', async () => {
    const { key, channelId, phone, conversationId } = await setup();
    const file = (await upload(key, { filename: 'receipt.png', data: PNG.toString('base64') })).body;
    const sent = await reply(key, conversationId, { type: 'image', file_id: file.id });
    expect(sent.status, sent.text).toBe(202);
    await drain();
    clock.advance(30 * 24 * 60 * 60 * 1000);
    expect((await h.admin('POST', '/sandbox/inbound', { channel_id: channelId, from: phone, text: 'hi' })).status).toBe(
      200,
    );
    const late = await reply(key, conversationId, { type: 'image', file_id: file.id });
    expect(late.status).toBe(422);
    expect(late.body.detail[0]).toMatchObject({ loc: ['body', 'file_id'] });
    expect(await pruneExpiredFiles(h.database.db, clock.now(), 100)).toBeGreaterThanOrEqual(1);
    const media = await h.app.inject({
      method: 'GET',
      url: `/v1/conversations/${conversationId}/messages/${sent.body.id}/media`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(media.statusCode).toBe(502);
    expect(media.json().detail).toMatchObject({ code: 'media_not_found', source: 'file' });
  });
});
