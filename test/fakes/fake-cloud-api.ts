// A local stand-in for the Graph API's WhatsApp endpoints, over real HTTP on 127.0.0.1. It answers in the Cloud
// API's documented shapes, records every request, and lets a test script the next answers (errors, hangs).

import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSignedWebhook } from '../../src/messaging/cloud/webhook-builder.ts';

export interface RecordedRequest {
  method: string;
  /** Path without the version prefix: `/123/messages`. */
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: unknown;
  rawBody: string;
}

export interface ScriptedResponse {
  status: number;
  /** JSON body; ignored when `rawBody` is given. */
  body?: unknown;
  rawBody?: string;
  /** Never answer (until the server closes): for timeout tests. */
  hang?: boolean;
  /** Accept the message (it counts as sent, and its status webhook goes out) but never answer the request. */
  acceptThenHang?: boolean;
}

/** Where the fake delivers status webhooks, as the platform does to a subscribed app. */
export interface WebhookTarget {
  url: string;
  appSecret: string;
  businessAccountId: string;
  delayMs?: number;
}

export type RequestMatcher = (request: RecordedRequest) => boolean;

/** An inbound file the fake platform holds (decisions §15: downloaded by `GET /{media-id}`, then its URL). */
export interface FakeMedia {
  mimeType: string;
  /** The file's bytes; or `size` bytes generated on the fly (a known pattern: byte i is i % 251). */
  bytes?: Buffer;
  size?: number;
  /** Send only this many bytes of the file, then drop the connection (a download that breaks mid-file). */
  breakAfter?: number;
  /** Send the headers, then nothing more (a download that stalls). */
  stall?: boolean;
}

/** Byte i of a generated file. */
export const generatedByte = (index: number) => index % 251;
// Any 64 KiB run of a generated file, whatever its offset, is a slice of this.
const PATTERN = Buffer.from(Array.from({ length: 251 + 64 * 1024 }, (_, index) => generatedByte(index)));

export interface CloudErrorInput {
  code: number;
  message?: string;
  type?: string;
  subcode?: number;
  details?: string;
  userTitle?: string;
  userMsg?: string;
  httpStatus?: number;
}

export interface FakeCloudApi {
  /** Pass this as the adapter's `baseUrl`. */
  readonly baseUrl: string;
  readonly token: string;
  readonly requests: RecordedRequest[];
  /** The next request that matches gets `response` (once, or `times` times); earlier scripts match first. */
  script(matcher: RequestMatcher, response: ScriptedResponse, times?: number): void;
  failNextSendTo(phoneDigits: string, error: CloudErrorInput): void;
  refuseNextTemplate(error: CloudErrorInput): void;
  failNextDelete(error: CloudErrorInput): void;
  hangNext(matcher: RequestMatcher): void;
  /** After this, every accepted send is followed by a signed `sent` status webhook carrying its callback data. */
  deliverStatusesTo(target: WebhookTarget): void;
  /** Accepted sends (message ids and recipients), in order. */
  /** Each send the platform took: its id, recipient, message `type` (text, template, image…) and callback data. */
  accepted: { id: string; to: string; type: string; callbackData?: string }[];
  /** Holds `media` under `id`: `GET /{id}` answers its URL, and that URL its bytes (with the token only). */
  addMedia(id: string, media: FakeMedia): void;
  /** Bytes of media `id` written to the socket so far (a reader that stops reading stops this growing). */
  mediaBytesSent(id: string): number;
  /** Whether the last download of media `id` has ended (finished, or its connection closed by the downloader). */
  mediaDownloadEnded(id: string): boolean;
  /** Each send waits this long before answering (a slow platform). */
  setSendDelay(ms: number): void;
  /** D294: files uploaded with `POST /{phone_number_id}/media` (multipart), in order; each is also held as media. */
  uploads: { id: string; phoneNumberId: string; type: string; filename: string; bytes: Buffer }[];
  close(): Promise<void>;
}

export const isSend: RequestMatcher = (request) => request.method === 'POST' && request.path.endsWith('/messages');
export const isTemplateCreate: RequestMatcher = (request) =>
  request.method === 'POST' && request.path.endsWith('/message_templates');
export const isTemplateDelete: RequestMatcher = (request) =>
  request.method === 'DELETE' && request.path.endsWith('/message_templates');

/** The Graph API error envelope. */
export function cloudErrorBody(error: CloudErrorInput): { error: Record<string, unknown> } {
  const body: Record<string, unknown> = {
    message: error.message ?? `(#${error.code}) error ${error.code}`,
    type: error.type ?? 'OAuthException',
    code: error.code,
  };
  if (error.subcode !== undefined) body.error_subcode = error.subcode;
  if (error.userTitle !== undefined) body.error_user_title = error.userTitle;
  if (error.userMsg !== undefined) body.error_user_msg = error.userMsg;
  if (error.details !== undefined) body.error_data = { messaging_product: 'whatsapp', details: error.details };
  body.fbtrace_id = 'AbCdEfGhIjKlMnOp';
  return { error: body };
}

function errorResponse(error: CloudErrorInput): ScriptedResponse {
  return { status: error.httpStatus ?? 400, body: cloudErrorBody(error) };
}

export async function startFakeCloudApi(options: { apiVersion?: string; token?: string } = {}): Promise<FakeCloudApi> {
  const version = options.apiVersion ?? 'v21.0';
  const token = options.token ?? 'test-token';
  const requests: RecordedRequest[] = [];
  const scripts: { matcher: RequestMatcher; response: ScriptedResponse; remaining: number }[] = [];
  const accepted: { id: string; to: string; type: string; callbackData?: string }[] = [];
  const media = new Map<string, FakeMedia>();
  const mediaSent = new Map<string, number>();
  const mediaEnded = new Map<string, boolean>();
  let webhookTarget: WebhookTarget | undefined;
  let origin = '';
  let sendDelayMs = 0;
  let sequence = 0;

  const acceptSend = (body: Record<string, unknown>, phoneNumberId: string) => {
    sequence += 1;
    const id = `wamid.FAKE${String(sequence).padStart(6, '0')}`;
    const to = typeof body.to === 'string' ? body.to : '';
    const callbackData = typeof body.biz_opaque_callback_data === 'string' ? body.biz_opaque_callback_data : undefined;
    const type = typeof body.type === 'string' ? body.type : '';
    accepted.push({ id, to, type, ...(callbackData ? { callbackData } : {}) });
    const target = webhookTarget;
    if (target) {
      const { rawBody, signature } = buildSignedWebhook(
        [
          {
            kind: 'message_status',
            businessAccountId: target.businessAccountId,
            phoneNumberId,
            platformMessageId: id,
            status: 'sent',
            recipient: `+${to}`,
            timestamp: new Date(),
            ...(callbackData ? { callbackData } : {}),
          },
        ],
        target.appSecret,
      );
      // Like the platform, a delivery that is not answered 200 is tried again later (a few times, backing off).
      const attempt = (tries: number) => {
        fetch(target.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
          body: rawBody,
        })
          .then((response) => response.ok)
          .catch(() => false)
          .then((ok) => {
            if (!ok && tries < 8) setTimeout(() => attempt(tries + 1), 100 * 2 ** tries);
          });
      };
      setTimeout(() => attempt(0), target.delayMs ?? 0);
    }
    return { id, to };
  };

  const answerByDefault = (request: RecordedRequest): ScriptedResponse => {
    if (request.headers.authorization !== `Bearer ${token}`) {
      return errorResponse({ code: 190, message: 'Invalid OAuth access token.', httpStatus: 401 });
    }
    const body =
      typeof request.body === 'object' && request.body !== null ? (request.body as Record<string, unknown>) : {};
    if (isTemplateCreate(request)) {
      sequence += 1;
      return {
        status: 200,
        body: { id: String(594425479261596 + sequence), status: 'PENDING', category: body.category },
      };
    }
    if (isTemplateDelete(request)) return { status: 200, body: { success: true } };
    if (isSend(request)) {
      const { id, to } = acceptSend(body, request.path.split('/')[1] ?? '');
      return {
        status: 200,
        body: {
          messaging_product: 'whatsapp',
          contacts: [{ input: to, wa_id: to }],
          messages: [{ id, message_status: 'accepted' }],
        },
      };
    }
    const mediaId = request.method === 'GET' ? /^\/([^/]+)$/.exec(request.path)?.[1] : undefined;
    if (mediaId !== undefined) {
      const file = media.get(decodeURIComponent(mediaId));
      if (!file) {
        // The Graph API's answer for an id it does not know (or no longer keeps).
        return errorResponse({
          code: 100,
          subcode: 33,
          type: 'GraphMethodException',
          message: `Unsupported get request. Object with ID '${mediaId}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
        });
      }
      const size = file.bytes?.length ?? file.size ?? 0;
      return {
        status: 200,
        body: {
          messaging_product: 'whatsapp',
          url: `${origin}/whatsapp_business/attachments/?mid=${mediaId}&ext=1744344496&hash=ATtest`,
          mime_type: file.mimeType,
          sha256: 'c2hhMjU2LW9mLXRoZS1maWxl',
          file_size: String(size),
          id: mediaId,
        },
      };
    }
    return errorResponse({ code: 100, message: 'Unsupported request', type: 'GraphMethodException' });
  };

  /** The media URL (lookaside): the bytes, with the token only; streamed with backpressure, never built whole. */
  const serveMedia = (request: RecordedRequest, outgoing: ServerResponse) => {
    const file = media.get(request.query.mid ?? '');
    if (request.headers.authorization !== `Bearer ${token}`) {
      outgoing.writeHead(401, { 'content-type': 'text/plain' });
      return outgoing.end('Unauthorized');
    }
    if (!file) {
      outgoing.writeHead(404, { 'content-type': 'text/plain' });
      return outgoing.end('Not Found');
    }
    const size = file.bytes?.length ?? file.size ?? 0;
    const mid = request.query.mid ?? '';
    mediaEnded.set(mid, false);
    outgoing.on('close', () => mediaEnded.set(mid, true));
    outgoing.writeHead(200, { 'content-type': file.mimeType, 'content-length': String(size) });
    if (file.stall) return outgoing.flushHeaders();
    const limit = Math.min(size, file.breakAfter ?? size);
    const chunkSize = 64 * 1024;
    let offset = 0;
    const pump = () => {
      while (offset < limit) {
        const end = Math.min(limit, offset + chunkSize);
        const chunk = file.bytes
          ? file.bytes.subarray(offset, end)
          : PATTERN.subarray(offset % 251, (offset % 251) + (end - offset));
        offset = end;
        mediaSent.set(request.query.mid ?? '', offset);
        if (!outgoing.write(chunk)) return void outgoing.once('drain', pump);
      }
      if (limit < size) outgoing.destroy();
      else outgoing.end();
    };
    pump();
  };

  /** D294: the Cloud API's media upload: a multipart form with `messaging_product`, `type` and `file`. */
  const uploads: FakeCloudApi['uploads'] = [];
  const receiveUpload = async (
    request: RecordedRequest,
    bytes: Buffer,
    contentType: string,
    outgoing: ServerResponse,
  ) => {
    const form = await new Response(new Uint8Array(bytes), { headers: { 'content-type': contentType } }).formData();
    const file = form.get('file');
    const type = form.get('type');
    if (form.get('messaging_product') !== 'whatsapp' || typeof type !== 'string' || !(file instanceof Blob)) {
      outgoing.writeHead(400, { 'content-type': 'application/json' });
      return outgoing.end(
        JSON.stringify({ error: { message: 'Invalid parameter', type: 'OAuthException', code: 100 } }),
      );
    }
    const id = String(1_000_000_000_000_000 + uploads.length + 1);
    const content = Buffer.from(await file.arrayBuffer());
    const phoneNumberId = request.path.split('/')[1] ?? '';
    uploads.push({ id, phoneNumberId, type, filename: (file as File).name, bytes: content });
    media.set(id, { mimeType: type, bytes: content });
    outgoing.writeHead(200, { 'content-type': 'application/json' });
    outgoing.end(JSON.stringify({ id }));
  };

  const pickResponse = (request: RecordedRequest): ScriptedResponse => {
    const index = scripts.findIndex((entry) => entry.matcher(request));
    const entry = scripts[index];
    if (!entry) return answerByDefault(request);
    entry.remaining -= 1;
    if (entry.remaining <= 0) scripts.splice(index, 1);
    return entry.response;
  };

  const server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const url = new URL(incoming.url ?? '/', 'http://127.0.0.1');
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const request: RecordedRequest = {
        method: incoming.method ?? 'GET',
        path: url.pathname.startsWith(`/${version}/`) ? url.pathname.slice(version.length + 1) : url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: incoming.headers,
        body: parseBody(rawBody),
        rawBody,
      };
      requests.push(request);
      if (request.method === 'GET' && request.path === '/whatsapp_business/attachments/') {
        return serveMedia(request, outgoing);
      }
      if (
        request.method === 'POST' &&
        /^\/[^/]+\/media$/.test(request.path) &&
        !scripts.some((e) => e.matcher(request))
      ) {
        return void receiveUpload(request, Buffer.concat(chunks), incoming.headers['content-type'] ?? '', outgoing);
      }
      const response = pickResponse(request);
      if (response.acceptThenHang) {
        acceptSend((request.body ?? {}) as Record<string, unknown>, request.path.split('/')[1] ?? '');
        return;
      }
      if (response.hang) return;
      const payload = response.rawBody ?? (response.body === undefined ? '' : JSON.stringify(response.body));
      const answer = () => {
        outgoing.writeHead(response.status, { 'content-type': 'application/json' });
        outgoing.end(payload);
      };
      if (sendDelayMs > 0 && isSend(request)) setTimeout(answer, sendDelayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;

  return {
    baseUrl: `http://127.0.0.1:${port}/${version}`,
    token,
    requests,
    script(matcher, response, times = 1) {
      scripts.push({ matcher, response, remaining: times });
    },
    failNextSendTo(phoneDigits, error) {
      const digits = phoneDigits.replace(/\D/g, '');
      const matcher: RequestMatcher = (request) =>
        isSend(request) && (request.body as { to?: unknown } | undefined)?.to === digits;
      scripts.push({ matcher, response: errorResponse(error), remaining: 1 });
    },
    refuseNextTemplate(error) {
      scripts.push({ matcher: isTemplateCreate, response: errorResponse(error), remaining: 1 });
    },
    failNextDelete(error) {
      scripts.push({ matcher: isTemplateDelete, response: errorResponse(error), remaining: 1 });
    },
    hangNext(matcher) {
      scripts.push({ matcher, response: { status: 0, hang: true }, remaining: 1 });
    },
    deliverStatusesTo(target) {
      webhookTarget = target;
    },
    accepted,
    uploads,
    addMedia(id, file) {
      media.set(id, file);
    },
    mediaBytesSent: (id) => mediaSent.get(id) ?? 0,
    mediaDownloadEnded: (id) => mediaEnded.get(id) ?? false,
    setSendDelay(ms) {
      sendDelayMs = ms;
    },
    close() {
      server.closeAllConnections(); // hung requests would otherwise keep close() waiting
      return new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

function parseBody(rawBody: string): unknown {
  if (rawBody === '') return undefined;
  try {
    return JSON.parse(rawBody);
  } catch {
    return rawBody;
  }
}
