// decisions §15 over the Cloud API adapter, against the fake Graph API (real HTTP on 127.0.0.1, the documented
// shapes): inbound media and reply context from the platform's `messages` webhook, and the media endpoint that
// downloads the file from the platform when asked (`GET /{media-id}` with the token, then its URL) and streams it:
// a 100 MB file passes through without the process's memory growing anywhere near its size.
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeCloudApi, generatedByte, startFakeCloudApi } from '../../fakes/fake-cloud-api.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { messagesOf } from '../../helpers/messages.ts';
import { waitUntil } from '../../helpers/wait.ts';

// A full collection before each measure, so that what is counted is what is held, not garbage not yet collected.
setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

let h: Harness;
let fake: FakeCloudApi;
let apiBase: string;

beforeAll(async () => {
  fake = await startFakeCloudApi();
  h = await startHarness({
    unlimited: true,
    platform: 'cloud',
    cloud: { baseUrl: fake.baseUrl, token: fake.token, timeoutMs: 2000 },
  });
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  apiBase = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await h.close();
  await fake.close();
});

let sequence = 0;
async function cloudNumber() {
  sequence += 1;
  const waba = `30229012934${String(1000 + sequence)}`;
  const phoneNumberId = `30654035224${String(1000 + sequence)}`;
  const { org, key } = await h.createOrg();
  await h.createAccount(org.id, {
    business_account_id: waba,
    numbers: [{ phone: '+15550100001', phone_number_id: phoneNumberId }],
  });
  return { key, waba, phoneNumberId };
}

/** The platform's `messages` webhook with the given messages from one contact, as documented. */
function messagesWebhook(waba: string, phoneNumberId: string, messages: unknown[]) {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: waba,
        changes: [
          {
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550100001', phone_number_id: phoneNumberId },
              contacts: [{ profile: { name: 'Sheena Nelson' }, wa_id: '16505551234' }],
              messages,
            },
            field: 'messages',
          },
        ],
      },
    ],
  };
}

const at = () => String(Math.floor(Date.now() / 1000));
const mediaPath = (conversationId: string, messageId: string) =>
  `/v1/conversations/${conversationId}/messages/${messageId}/media`;

/** The organization's one conversation and its messages, newest first. */
async function conversationOf(key: string) {
  const conversation = (await h.api('GET', '/v1/conversations', { key })).body.items[0];
  return { conversationId: conversation.id as string, messages: await messagesOf(h, key, conversation.id) };
}

describe('inbound media from the Cloud API', () => {
  it('stores an image, a document and a reply from the documented webhook, and downloads the file with the token', async () => {
    const { key, waba, phoneNumberId } = await cloudNumber();
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(3000, 5)]);
    fake.addMedia('1045229047257573', { mimeType: 'application/pdf', bytes: pdf });
    const first = messagesWebhook(waba, phoneNumberId, [
      {
        from: '16505551234',
        id: 'wamid.CLOUD.IMAGE',
        timestamp: at(),
        type: 'image',
        image: { caption: 'Broken screen', mime_type: 'image/jpeg', sha256: 'HASH', id: '1003383421387256' },
      },
    ]);
    expect((await h.webhook(first)).status).toBe(200);
    const second = messagesWebhook(waba, phoneNumberId, [
      {
        context: { from: '15550100001', id: 'wamid.CLOUD.IMAGE' },
        from: '16505551234',
        id: 'wamid.CLOUD.DOC',
        timestamp: at(),
        type: 'document',
        document: {
          caption: 'The warranty',
          filename: 'warranty.pdf',
          mime_type: 'application/pdf',
          sha256: 'HASH2',
          id: '1045229047257573',
        },
      },
    ]);
    expect((await h.webhook(second)).status).toBe(200);

    const { conversationId, messages } = await conversationOf(key);
    const [document, image] = messages;
    expect(image).toMatchObject({
      type: 'image',
      text: 'Broken screen',
      media: { mime_type: 'image/jpeg', filename: null, caption: 'Broken screen', url: null },
      reply_to: null,
      platform_message_id: 'wamid.CLOUD.IMAGE',
    });
    expect(document).toMatchObject({
      type: 'document',
      text: 'The warranty',
      media: { mime_type: 'application/pdf', filename: 'warranty.pdf', caption: 'The warranty', url: null },
      reply_to: image.id,
    });

    fake.requests.length = 0;
    const file = await fetch(`${apiBase}${mediaPath(conversationId, document.id)}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(file.headers.get('content-length')).toBe(String(pdf.length));
    expect(file.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''warranty.pdf");
    expect(Buffer.from(await file.arrayBuffer()).equals(pdf)).toBe(true);
    expect(fake.requests.map((request) => [request.method, request.path, request.headers.authorization])).toEqual([
      ['GET', '/1045229047257573', `Bearer ${fake.token}`],
      ['GET', '/whatsapp_business/attachments/', `Bearer ${fake.token}`],
    ]);
    expect(fake.requests[0]?.query).toEqual({ phone_number_id: phoneNumberId });

    // the image's media id is unknown to the platform (expired): 502, never a 500
    const gone = await h.api('GET', mediaPath(conversationId, image.id), { key });
    expect(gone.status).toBe(502);
    expect(gone.body.detail).toMatchObject({ code: 'media_not_found', source: 'platform' });
  });

  it('answers 503 media_unavailable when the platform fails or does not answer, and recovers after', async () => {
    const { key, waba, phoneNumberId } = await cloudNumber();
    fake.addMedia('m-fault', { mimeType: 'image/png', bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47]) });
    const webhook = messagesWebhook(waba, phoneNumberId, [
      {
        from: '16505551234',
        id: 'wamid.FAULT',
        timestamp: at(),
        type: 'sticker',
        sticker: { id: 'm-fault', mime_type: 'image/webp', sha256: 'H' },
      },
    ]);
    expect((await h.webhook(webhook)).status).toBe(200);
    const { conversationId, messages } = await conversationOf(key);
    const path = mediaPath(conversationId, messages[0].id);

    fake.script((request) => request.path === '/m-fault', {
      status: 500,
      body: { error: { message: 'An unknown error occurred', type: 'OAuthException', code: 1 } },
    });
    const fault = await h.api('GET', path, { key });
    expect(fault.status).toBe(503);
    expect(fault.body.detail).toMatchObject({ code: 'media_unavailable', source: 'platform' });
    fake.hangNext((request) => request.path === '/m-fault');
    const silent = await h.api('GET', path, { key });
    expect(silent.status).toBe(503);
    expect(silent.body.detail.message).toMatch(/timed out/);
    const ok = await h.api('GET', path, { key });
    expect(ok.status).toBe(200);
    // the platform's stored type (webp) is what the file is answered with
    expect(ok.headers['content-type']).toBe('image/png');
  });

  it('cuts the answer short (never a 500 after the headers) when the platform’s download breaks mid-file', async () => {
    const { key, waba, phoneNumberId } = await cloudNumber();
    fake.addMedia('m-broken', { mimeType: 'video/mp4', size: 4 * 1024 * 1024, breakAfter: 1024 * 1024 });
    const webhook = messagesWebhook(waba, phoneNumberId, [
      {
        from: '16505551234',
        id: 'wamid.BROKEN',
        timestamp: at(),
        type: 'video',
        video: { id: 'm-broken', mime_type: 'video/mp4', sha256: 'H' },
      },
    ]);
    expect((await h.webhook(webhook)).status).toBe(200);
    const { conversationId, messages } = await conversationOf(key);
    const answer = await fetch(`${apiBase}${mediaPath(conversationId, messages[0].id)}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-length')).toBe(String(4 * 1024 * 1024));
    await expect(answer.arrayBuffer()).rejects.toThrow();
    // the server is fine: the next request is answered
    expect((await h.api('GET', '/v1/conversations', { key })).status).toBe(200);
  });

  it('stops the platform’s download when the caller goes away mid-file', async () => {
    const { key, waba, phoneNumberId } = await cloudNumber();
    const size = 64 * 1024 * 1024;
    fake.addMedia('m-abandoned', { mimeType: 'video/mp4', size });
    const webhook = messagesWebhook(waba, phoneNumberId, [
      {
        from: '16505551234',
        id: 'wamid.ABANDONED',
        timestamp: at(),
        type: 'video',
        video: { id: 'm-abandoned', mime_type: 'video/mp4', sha256: 'H' },
      },
    ]);
    expect((await h.webhook(webhook)).status).toBe(200);
    const { conversationId, messages } = await conversationOf(key);
    const controller = new AbortController();
    const answer = await fetch(`${apiBase}${mediaPath(conversationId, messages[0].id)}`, {
      headers: { authorization: `Bearer ${key}` },
      signal: controller.signal,
    });
    const reader = (answer.body as ReadableStream<Uint8Array>).getReader();
    let received = 0;
    while (received < 1024 * 1024) received += (await reader.read()).value?.length ?? 0;
    controller.abort();
    await waitUntil(() => fake.mediaDownloadEnded('m-abandoned'), { message: 'the platform download to end' });
    expect(fake.mediaBytesSent('m-abandoned')).toBeLessThan(size / 2);

    // HEAD answers the headers and stops the download too
    const head = await fetch(`${apiBase}${mediaPath(conversationId, messages[0].id)}`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(size));
    expect(head.headers.get('content-type')).toBe('video/mp4');
    await waitUntil(() => fake.mediaDownloadEnded('m-abandoned'), { message: 'the HEAD’s download to end' });
    expect(fake.mediaBytesSent('m-abandoned')).toBeLessThan(size / 2);
  });

  it('streams a 100 MB file with backpressure, the process’s memory growing far less than the file', async () => {
    const { key, waba, phoneNumberId } = await cloudNumber();
    const size = 100 * 1024 * 1024;
    fake.addMedia('m-huge', { mimeType: 'video/mp4', size });
    const webhook = messagesWebhook(waba, phoneNumberId, [
      {
        from: '16505551234',
        id: 'wamid.HUGE',
        timestamp: at(),
        type: 'video',
        video: { id: 'm-huge', mime_type: 'video/mp4', sha256: 'H' },
      },
    ]);
    expect((await h.webhook(webhook)).status).toBe(200);
    const { conversationId, messages } = await conversationOf(key);

    const MB = 1024 * 1024;
    const held = () => {
      gc();
      const now = process.memoryUsage();
      return now.heapUsed + now.arrayBuffers;
    };
    const baseline = held();
    const baselineRss = process.memoryUsage().rss;
    let peakRss = baselineRss;
    let peakHeld = baseline;
    let nextCheck = 0;
    const answer = await fetch(`${apiBase}${mediaPath(conversationId, messages[0].id)}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('video/mp4');
    expect(answer.headers.get('content-length')).toBe(String(size));
    const reader = (answer.body as ReadableStream<Uint8Array>).getReader();
    let received = 0;
    let wrong = 0;
    let paused: { received: number; sent: number; heldGrowth: number } | undefined;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (value[0] !== generatedByte(received)) wrong += 1; // spot-check the bytes against the pattern
      received += value.length;
      if (received >= nextCheck) {
        // Every 5 MB, after a full collection: what the process holds while the bytes flow, not their garbage.
        nextCheck += 5 * MB;
        peakHeld = Math.max(peakHeld, held());
        peakRss = Math.max(peakRss, process.memoryUsage().rss);
      }
      if (!paused && received >= 40 * MB) {
        // The reader stops: backpressure must stop the platform's download too, a few buffers ahead at most.
        let sent = -1;
        await waitUntil(
          () => {
            const now = fake.mediaBytesSent('m-huge');
            const still = now === sent;
            sent = now;
            return still;
          },
          { intervalMs: 100, message: 'the platform’s download to stop while the reader waits' },
        );
        paused = { received, sent, heldGrowth: held() - baseline };
      }
    }
    expect(received).toBe(size);
    expect(wrong).toBe(0);
    const stats = paused as { received: number; sent: number; heldGrowth: number };
    console.log(
      `100 MB media stream: reader paused at ${(stats.received / MB).toFixed(1)} MB with the platform at ` +
        `${(stats.sent / MB).toFixed(1)} MB; heap+buffers held then ${(stats.heldGrowth / MB).toFixed(1)} MB over ` +
        `baseline; at every 5 MB, peak held growth ${((peakHeld - baseline) / MB).toFixed(1)} MB and ` +
        `peak RSS growth ${((peakRss - baselineRss) / MB).toFixed(1)} MB`,
    );
    // Streamed, not buffered: the platform is at most a few socket and stream buffers ahead of the reader, and what
    // the process holds (server, fake platform and this client together: the fake and a client alone hold ≈ 11 MB
    // in flight) is a fraction of the file, while it flows and when the reader stops.
    expect(stats.sent - stats.received).toBeLessThan(24 * MB);
    expect(stats.heldGrowth).toBeLessThan(16 * MB);
    expect(peakHeld - baseline).toBeLessThan(40 * MB);
    expect(peakRss - baselineRss).toBeLessThan(100 * MB);
  }, 120_000);
});

describe('a reply with an uploaded file over the Cloud API (D294)', () => {
  it('uploads the bytes to the number’s media edge, then sends the message by the media id it answered', async () => {
    const { key, waba, phoneNumberId } = await cloudNumber();
    const hello = messagesWebhook(waba, phoneNumberId, [
      { from: '16505551234', id: 'wamid.CLOUD.HELLO', timestamp: at(), type: 'text', text: { body: 'hi' } },
    ]);
    expect((await h.webhook(hello)).status).toBe(200);
    const { conversationId } = await conversationOf(key);
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(2000, 9)]);
    const file = await h.api('POST', '/v1/files', {
      key,
      body: { filename: 'invoice.pdf', data: pdf.toString('base64') },
    });
    expect(file.status, file.text).toBe(201);
    const sent = await h.api('POST', `/v1/conversations/${conversationId}/messages`, {
      key,
      body: { type: 'document', file_id: file.body.id, caption: 'Your invoice' },
    });
    expect(sent.status, sent.text).toBe(202);
    while ((await h.wiring.replies.runOnce()) > 0);
    const { messages } = await conversationOf(key);
    expect(messages.find((message) => message.id === sent.body.id)?.status).toBe('sent');
    const upload = fake.uploads.at(-1);
    expect(upload).toMatchObject({ phoneNumberId, type: 'application/pdf', filename: 'invoice.pdf' });
    expect(Buffer.compare(upload?.bytes as Buffer, pdf)).toBe(0);
    const send = fake.requests
      .filter((request) => request.method === 'POST' && request.path.endsWith('/messages'))
      .at(-1);
    expect(send?.body).toMatchObject({
      type: 'document',
      document: { id: upload?.id, caption: 'Your invoice', filename: 'invoice.pdf' },
    });
    expect((send?.body as { document?: object } | undefined)?.document).not.toHaveProperty('link');
  });
});
