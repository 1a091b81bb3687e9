// decisions §15 through the cloud adapter, against the fake Graph API over real HTTP on 127.0.0.1 in the Cloud API's
// documented shapes: free-form messages (text with `preview_url`, media by `link` with caption and filename,
// `context.message_id`, `biz_opaque_callback_data`, 131047 as `window_closed`), read receipts, and the two-step media
// download (`GET /{media-id}` with the token, then its URL with the same Authorization header), streamed.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCloudPlatform } from '../../../../src/messaging/cloud/cloud-platform.ts';
import type { FreeformMessage, MessagingPlatform } from '../../../../src/messaging/platform.ts';
import { type FakeCloudApi, generatedByte, isSend, startFakeCloudApi } from '../../../fakes/fake-cloud-api.ts';

let fake: FakeCloudApi;
let platform: MessagingPlatform;

beforeEach(async () => {
  fake = await startFakeCloudApi();
  platform = createCloudPlatform({ baseUrl: fake.baseUrl, token: fake.token, timeoutMs: 1000 });
});
afterEach(async () => {
  await fake.close();
});

const phoneNumberId = '106540352242922';
const text: FreeformMessage = {
  phoneNumberId,
  to: '+16505551234',
  body: { type: 'text', text: 'Your order ships today: https://example.com/track/1', previewUrl: true },
};

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe('sendMessage', () => {
  it('posts a text message with preview_url, its reply context and callback data', async () => {
    const result = await platform.sendMessage({
      ...text,
      replyToPlatformMessageId: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=',
      callbackData: 'msg_01JH5ZS7E8F9G0H1J2K3L4M5N6',
    });
    expect(result).toEqual({ ok: true, platformMessageId: 'wamid.FAKE000001' });
    const [request] = fake.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe(`/${phoneNumberId}/messages`);
    expect(request?.headers.authorization).toBe('Bearer test-token');
    expect(request?.body).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '16505551234',
      context: { message_id: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=' },
      type: 'text',
      text: { preview_url: true, body: 'Your order ships today: https://example.com/track/1' },
      biz_opaque_callback_data: 'msg_01JH5ZS7E8F9G0H1J2K3L4M5N6',
    });
  });

  it('leaves preview_url, context and callback data out when not given', async () => {
    await platform.sendMessage({ phoneNumberId, to: '+16505551234', body: { type: 'text', text: 'hi' } });
    expect(fake.requests[0]?.body).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '16505551234',
      type: 'text',
      text: { body: 'hi' },
    });
  });

  it('sends image, video, audio and document by link, with caption and (documents only) filename', async () => {
    const link = (name: string) => `https://cdn.example.com/${name}`;
    const bodies: FreeformMessage['body'][] = [
      { type: 'image', link: link('a.jpg'), caption: 'The bill' },
      { type: 'video', link: link('v.mp4'), caption: 'How to' },
      // the platform takes no caption on audio, and a filename only on documents
      { type: 'audio', link: link('a.ogg'), caption: 'ignored', filename: 'ignored.ogg' },
      { type: 'document', link: link('c.pdf'), caption: 'Signed', filename: 'contract.pdf' },
      { type: 'image', link: link('b.png'), filename: 'ignored.png' },
    ];
    for (const body of bodies) {
      expect((await platform.sendMessage({ phoneNumberId, to: '+16505551234', body })).ok).toBe(true);
    }
    const wire = fake.requests.map((request) => request.body as Record<string, unknown>);
    const envelope = { messaging_product: 'whatsapp', recipient_type: 'individual', to: '16505551234' };
    expect(wire).toEqual([
      { ...envelope, type: 'image', image: { link: link('a.jpg'), caption: 'The bill' } },
      { ...envelope, type: 'video', video: { link: link('v.mp4'), caption: 'How to' } },
      { ...envelope, type: 'audio', audio: { link: link('a.ogg') } },
      { ...envelope, type: 'document', document: { link: link('c.pdf'), caption: 'Signed', filename: 'contract.pdf' } },
      { ...envelope, type: 'image', image: { link: link('b.png') } },
    ]);
  });

  it('maps the re-engagement refusal (131047) to window_closed, not retryable', async () => {
    fake.failNextSendTo('16505551234', {
      code: 131047,
      message: 'Re-engagement message',
      details: 'Message failed to send because more than 24 hours have passed since the customer last replied.',
    });
    expect(await platform.sendMessage(text)).toEqual({
      ok: false,
      reason: 'window_closed',
      retryable: false,
      code: 131047,
      message:
        'Re-engagement message: Message failed to send because more than 24 hours have passed since the customer last replied.',
    });
  });

  it('maps the other codes as for templates (not on network, throughput)', async () => {
    fake.failNextSendTo('16505551234', { code: 131026, message: 'Message undeliverable' });
    expect(await platform.sendMessage(text)).toMatchObject({ ok: false, reason: 'not_on_network', retryable: false });
    fake.failNextSendTo('16505551234', { code: 130429, message: 'Rate limit hit' });
    expect(await platform.sendMessage(text)).toMatchObject({ ok: false, reason: 'rate_limited', retryable: true });
  });

  it('reports a hand-off without an answer (timeout) as uncertain, never retryable', async () => {
    fake.hangNext(isSend);
    expect(await platform.sendMessage(text)).toMatchObject({
      ok: false,
      reason: 'platform_error',
      retryable: false,
      uncertain: true,
    });
  });

  it('reports a platform that refused the connection as retryable and certain', async () => {
    await fake.close();
    const result = await platform.sendMessage(text);
    expect(result).toMatchObject({ ok: false, retryable: true });
    expect(result).not.toHaveProperty('uncertain');
    fake = await startFakeCloudApi();
  });
});

describe('markRead', () => {
  it('posts the documented read receipt and takes {success: true}', async () => {
    fake.script((request) => isSend(request) && (request.body as { status?: string }).status === 'read', {
      status: 200,
      body: { success: true },
    });
    expect(await platform.markRead({ phoneNumberId, platformMessageId: 'wamid.IN1' })).toEqual({ ok: true });
    expect(fake.requests[0]?.path).toBe(`/${phoneNumberId}/messages`);
    expect(fake.requests[0]?.body).toEqual({ messaging_product: 'whatsapp', status: 'read', message_id: 'wamid.IN1' });
  });

  it('reports a refused receipt without throwing', async () => {
    fake.script(isSend, { status: 400, body: { error: { message: 'Invalid parameter', code: 100 } } });
    expect(await platform.markRead({ phoneNumberId, platformMessageId: 'wamid.nope' })).toEqual({
      ok: false,
      reason: 'Invalid parameter',
    });
  });
});

describe('downloadMedia', () => {
  it('looks the media up with the token, then downloads its URL with the same Authorization header', async () => {
    const bytes = Buffer.from('%PDF-1.7 a small document');
    fake.addMedia('1045229047257573', { mimeType: 'application/pdf', bytes });
    const result = await platform.downloadMedia({ phoneNumberId, platformMediaId: '1045229047257573' });
    if (!result.ok) throw new Error(result.message);
    expect(result.mimeType).toBe('application/pdf');
    expect(result.contentLength).toBe(bytes.length);
    expect(await readAll(result.body)).toEqual(bytes);
    const [lookup, download] = fake.requests;
    expect(lookup).toMatchObject({
      method: 'GET',
      path: '/1045229047257573',
      query: { phone_number_id: phoneNumberId },
    });
    expect(lookup?.headers.authorization).toBe('Bearer test-token');
    expect(download).toMatchObject({ method: 'GET', path: '/whatsapp_business/attachments/' });
    expect(download?.query.mid).toBe('1045229047257573');
    expect(download?.headers.authorization).toBe('Bearer test-token');
  });

  it('streams a large file chunk by chunk', async () => {
    const size = 8 * 1024 * 1024 + 17;
    fake.addMedia('big', { mimeType: 'video/mp4', size });
    const result = await platform.downloadMedia({ phoneNumberId, platformMediaId: 'big' });
    if (!result.ok) throw new Error(result.message);
    let received = 0;
    let chunks = 0;
    let wrong = 0;
    for await (const chunk of result.body) {
      for (let index = 0; index < chunk.length; index += 4099) {
        if (chunk[index] !== generatedByte(received + index)) wrong += 1;
      }
      received += chunk.length;
      chunks += 1;
    }
    expect(received).toBe(size);
    expect(wrong).toBe(0);
    expect(chunks).toBeGreaterThan(10);
  });

  it('answers not_found for a media id the platform does not know (Graph error 100, subcode 33)', async () => {
    const result = await platform.downloadMedia({ phoneNumberId, platformMediaId: '999' });
    expect(result).toMatchObject({ ok: false, reason: 'not_found' });
    expect(fake.requests).toHaveLength(1);
  });

  it('answers unavailable for a refused token, a platform fault or no answer', async () => {
    const wrongToken = createCloudPlatform({ baseUrl: fake.baseUrl, token: 'expired', timeoutMs: 1000 });
    fake.addMedia('m1', { mimeType: 'image/jpeg', bytes: Buffer.from([0xff, 0xd8, 0xff]) });
    expect(await wrongToken.downloadMedia({ phoneNumberId, platformMediaId: 'm1' })).toMatchObject({
      ok: false,
      reason: 'unavailable',
      message: 'Invalid OAuth access token.',
    });
    fake.script((request) => request.path === '/m1', { status: 500, body: { error: { message: 'boom', code: 1 } } });
    expect(await platform.downloadMedia({ phoneNumberId, platformMediaId: 'm1' })).toMatchObject({
      ok: false,
      reason: 'unavailable',
    });
    fake.hangNext((request) => request.path === '/m1');
    expect(await platform.downloadMedia({ phoneNumberId, platformMediaId: 'm1' })).toMatchObject({
      ok: false,
      reason: 'unavailable',
      message: expect.stringMatching(/timed out/),
    });
    await fake.close();
    expect(await platform.downloadMedia({ phoneNumberId, platformMediaId: 'm1' })).toMatchObject({
      ok: false,
      reason: 'unavailable',
      message: expect.stringMatching(/unreachable/),
    });
    fake = await startFakeCloudApi();
  });

  it('answers not_found when the media URL is gone (404) after the lookup', async () => {
    fake.addMedia('m2', { mimeType: 'image/jpeg', bytes: Buffer.from([1]) });
    fake.script((request) => request.path === '/m2', {
      status: 200,
      body: {
        messaging_product: 'whatsapp',
        url: `${new URL(fake.baseUrl).origin}/whatsapp_business/attachments/?mid=gone`,
        mime_type: 'image/jpeg',
        sha256: 'x',
        file_size: '1',
        id: 'm2',
      },
    });
    expect(await platform.downloadMedia({ phoneNumberId, platformMediaId: 'm2' })).toMatchObject({
      ok: false,
      reason: 'not_found',
    });
  });

  it('fails the stream when the download breaks or stalls mid-file', async () => {
    fake.addMedia('broken', { mimeType: 'video/mp4', size: 1024 * 1024, breakAfter: 200 * 1024 });
    const broken = await platform.downloadMedia({ phoneNumberId, platformMediaId: 'broken' });
    if (!broken.ok) throw new Error(broken.message);
    await expect(readAll(broken.body)).rejects.toThrow();

    fake.addMedia('stalled', { mimeType: 'video/mp4', size: 1024, stall: true });
    const stalled = await platform.downloadMedia({ phoneNumberId, platformMediaId: 'stalled' });
    if (!stalled.ok) throw new Error(stalled.message);
    const started = Date.now();
    await expect(readAll(stalled.body)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(5000); // the 1 s idle deadline, not forever
  });
});
