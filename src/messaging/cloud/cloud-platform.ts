// The messaging port over the WhatsApp Business Cloud API (Graph API). Wire shapes only: no retries, no storage.
// Every method answers with a result value; nothing here throws on a platform or network fault.

import { declaredLength, withIdleTimeout } from '../media/media-stream.ts';
import type {
  FreeformMessage,
  MediaDownload,
  MediaUpload,
  MediaUploadResult,
  MessagingPlatform,
  ReadReceipt,
  SendResult,
  SubmitTemplateResult,
  TemplateCategory,
  TemplateDeletion,
  TemplateMessage,
  TemplateSubmission,
} from '../platform.ts';
import { callGraph, type GraphClientOptions, type GraphError, isRecord, readGraphError } from './graph-client.ts';
import { classifyPlatformError } from './platform-errors.ts';
import { toWireFreeformMessage, toWireTemplateMessage, type WireObject } from './send-wire.ts';
import { cloudInbound } from './webhook-parser.ts';

export { classifyPlatformError } from './platform-errors.ts';

export interface CloudPlatformOptions {
  /** For example `https://graph.facebook.com/v21.0`. */
  baseUrl: string;
  token: string;
  fetch?: typeof fetch;
  /** Per request; default 15 s. */
  timeoutMs?: number;
}

const defaultTimeoutMs = 15_000;
const categories: readonly TemplateCategory[] = ['MARKETING', 'UTILITY', 'AUTHENTICATION'];

export function createCloudPlatform(options: CloudPlatformOptions): MessagingPlatform {
  const client: GraphClientOptions = {
    baseUrl: options.baseUrl,
    token: options.token,
    fetch: options.fetch ?? globalThis.fetch,
    timeoutMs: options.timeoutMs ?? defaultTimeoutMs,
  };
  return {
    name: 'cloud',
    inbound: cloudInbound,
    submitTemplate: (submission) => submitTemplate(client, submission),
    deleteTemplate: (deletion) => deleteTemplate(client, deletion),
    sendTemplate: (message) => sendTemplate(client, message),
    markRead: (receipt) => markRead(client, receipt),
    sendMessage: (message) => sendMessage(client, message),
    downloadMedia: (media) => downloadMedia(client, media),
    uploadMedia: (upload) => uploadMedia(client, upload),
  };
}

/** D294: the Cloud API's media upload (`POST /{phone_number_id}/media`, multipart), answering the media id. */
async function uploadMedia(client: GraphClientOptions, upload: MediaUpload): Promise<MediaUploadResult> {
  const form = new FormData();
  form.set('messaging_product', 'whatsapp');
  form.set('type', upload.mimeType);
  form.set('file', new Blob([new Uint8Array(upload.bytes)], { type: upload.mimeType }), upload.filename);
  const outcome = await callGraph(client, {
    method: 'POST',
    path: `${encodeURIComponent(upload.phoneNumberId)}/media`,
    body: form,
  });
  if (outcome.kind === 'unreachable') {
    // Nothing is sent without the media id: trying again is always safe.
    return { ok: false, reason: 'platform_error', retryable: true, message: outcome.message };
  }
  const error = readGraphError(outcome.body);
  if (error || outcome.status >= 300) {
    const { retryable } = classifyPlatformError(error?.code, outcome.status);
    const message = error ? describeError(error) : `platform answered HTTP ${outcome.status}`;
    return error?.code === undefined
      ? { ok: false, reason: 'platform_error', retryable, message }
      : { ok: false, reason: 'platform_error', retryable, code: error.code, message };
  }
  const id = isRecord(outcome.body) && typeof outcome.body.id === 'string' ? outcome.body.id : undefined;
  if (!id) return { ok: false, reason: 'platform_error', retryable: true, message: 'platform answered no media id' };
  return { ok: true, platformMediaId: id };
}

/** The Cloud API's read receipt: `status: "read"` with the inbound message's id on the number's messages edge. */
async function markRead(client: GraphClientOptions, receipt: ReadReceipt): Promise<{ ok: boolean; reason?: string }> {
  const outcome = await callGraph(client, {
    method: 'POST',
    path: `${encodeURIComponent(receipt.phoneNumberId)}/messages`,
    body: { messaging_product: 'whatsapp', status: 'read', message_id: receipt.platformMessageId },
  });
  if (outcome.kind === 'unreachable') return { ok: false, reason: `platform unreachable: ${outcome.message}` };
  const error = readGraphError(outcome.body);
  if (error) return { ok: false, reason: describeError(error) };
  if (outcome.status >= 300) return { ok: false, reason: `platform answered HTTP ${outcome.status}` };
  return { ok: true };
}

async function submitTemplate(
  client: GraphClientOptions,
  submission: TemplateSubmission,
): Promise<SubmitTemplateResult> {
  const outcome = await callGraph(client, {
    method: 'POST',
    path: `${encodeURIComponent(submission.businessAccountId)}/message_templates`,
    body: {
      name: submission.name,
      language: submission.language,
      category: submission.category,
      // Named placeholders are refused unless the submission says so; examples are the caller's job.
      parameter_format: submission.parameterFormat,
      components: submission.components,
    },
  });
  if (outcome.kind === 'unreachable') {
    return { ok: false, reason: `platform unreachable: ${outcome.message}`, unavailable: true };
  }
  const error = readGraphError(outcome.body);
  if (error || outcome.status >= 300) {
    const refused = refusal(error, outcome.status);
    // A server fault says nothing about the template itself.
    return outcome.status >= 500 && !refused.ok ? { ...refused, unavailable: true } : refused;
  }
  const body = isRecord(outcome.body) ? outcome.body : {};
  const id = body.id;
  if (typeof id !== 'string' && typeof id !== 'number') {
    return { ok: false, reason: 'platform answered without a template id' };
  }
  // The platform may re-categorise at creation; its answer wins over what was asked.
  const category = categories.find((known) => known === body.category) ?? submission.category;
  const status = typeof body.status === 'string' ? body.status : 'PENDING';
  return { ok: true, platformTemplateId: String(id), status, category };
}

function refusal(error: GraphError | undefined, status: number): SubmitTemplateResult {
  if (!error) return { ok: false, reason: `platform answered HTTP ${status}` };
  // error_user_msg is the platform's explanation meant for people (why the template was refused).
  const reason = error.errorUserMsg ?? error.message;
  return error.code === undefined ? { ok: false, reason } : { ok: false, reason, code: error.code };
}

async function deleteTemplate(
  client: GraphClientOptions,
  deletion: TemplateDeletion,
): Promise<{ ok: boolean; reason?: string }> {
  try {
    const query: Record<string, string> = { name: deletion.name };
    // hsm_id narrows the delete to this one language version; without it the platform deletes every language.
    if (deletion.platformTemplateId !== '') query.hsm_id = deletion.platformTemplateId;
    const outcome = await callGraph(client, {
      method: 'DELETE',
      path: `${encodeURIComponent(deletion.businessAccountId)}/message_templates`,
      query,
    });
    if (outcome.kind === 'unreachable') return { ok: false, reason: `platform unreachable: ${outcome.message}` };
    const error = readGraphError(outcome.body);
    if (error) return { ok: false, reason: error.errorUserMsg ?? error.message };
    if (outcome.status >= 300) return { ok: false, reason: `platform answered HTTP ${outcome.status}` };
    if (isRecord(outcome.body) && outcome.body.success === false) return { ok: false, reason: 'platform refused' };
    return { ok: true };
  } catch (error) {
    // contract: deletion at the platform is best effort and must never fail the local delete.
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

function sendTemplate(client: GraphClientOptions, message: TemplateMessage): Promise<SendResult> {
  return postMessage(client, message.phoneNumberId, toWireTemplateMessage(message));
}

/** decisions §15: text or media by link, inside the window; the same outcomes as a template (131047: window_closed). */
function sendMessage(client: GraphClientOptions, message: FreeformMessage): Promise<SendResult> {
  return postMessage(client, message.phoneNumberId, toWireFreeformMessage(message));
}

async function postMessage(client: GraphClientOptions, phoneNumberId: string, wire: WireObject): Promise<SendResult> {
  const outcome = await callGraph(client, {
    method: 'POST',
    path: `${encodeURIComponent(phoneNumberId)}/messages`,
    body: wire,
  });
  if (outcome.kind === 'unreachable') {
    // Refused before anything was sent: safe to try again. Anything else (a timeout, a connection dropped
    // mid-request) may have reached the platform, so its outcome is unknown.
    if (outcome.notSent) return { ok: false, reason: 'platform_error', retryable: true, message: outcome.message };
    return { ok: false, reason: 'platform_error', retryable: false, uncertain: true, message: outcome.message };
  }
  const error = readGraphError(outcome.body);
  if (error || outcome.status >= 300) {
    const { reason, retryable } = classifyPlatformError(error?.code, outcome.status);
    const text = error ? describeError(error) : `platform answered HTTP ${outcome.status}`;
    return error?.code === undefined
      ? { ok: false, reason, retryable, message: text }
      : { ok: false, reason, retryable, code: error.code, message: text };
  }
  const id = firstMessageId(outcome.body);
  if (id !== undefined) return { ok: true, platformMessageId: id };
  // A 2xx without an id may still have been accepted: retrying could message the person twice, so do not.
  return {
    ok: false,
    reason: 'platform_error',
    retryable: false,
    uncertain: true,
    message: 'platform answered without a message id',
  };
}

/**
 * The Graph API's media download, in two steps: `GET /{media-id}` (with the token) answers a short-lived URL with the
 * file's type and size; `GET` that URL with the same `Authorization` header answers the bytes, handed on as they
 * arrive. A media id the platform no longer has (media expire) is `not_found`; anything else that fails is
 * `unavailable`.
 */
async function downloadMedia(
  client: GraphClientOptions,
  media: { phoneNumberId: string; platformMediaId: string },
): Promise<MediaDownload> {
  const lookup = await callGraph(client, {
    method: 'GET',
    path: encodeURIComponent(media.platformMediaId),
    // Optional: makes the platform check that the media belongs to this number.
    query: { phone_number_id: media.phoneNumberId },
  });
  if (lookup.kind === 'unreachable') {
    return { ok: false, reason: 'unavailable', message: `platform unreachable: ${lookup.message}` };
  }
  const error = readGraphError(lookup.body);
  if (error || lookup.status >= 300) {
    const message = error ? describeError(error) : `platform answered HTTP ${lookup.status}`;
    // An unknown object is Graph error 100 (subcode 33) or a plain 404.
    const gone = lookup.status === 404 || (error?.code === 100 && error.errorSubcode === 33);
    return { ok: false, reason: gone ? 'not_found' : 'unavailable', message };
  }
  const body = isRecord(lookup.body) ? lookup.body : {};
  if (typeof body.url !== 'string' || !/^https?:\/\//i.test(body.url)) {
    return { ok: false, reason: 'unavailable', message: 'platform answered without a media URL' };
  }
  const mimeType = typeof body.mime_type === 'string' && body.mime_type !== '' ? body.mime_type : undefined;
  // The platform sends file_size as a string ("303833"); some versions as a number.
  const fileSize = declaredLength(
    typeof body.file_size === 'number' ? String(body.file_size) : (body.file_size as string),
  );

  const controller = new AbortController();
  const headerTimer = setTimeout(() => controller.abort(), client.timeoutMs);
  let response: Response;
  try {
    response = await client.fetch(body.url, {
      headers: { authorization: `Bearer ${client.token}` },
      signal: controller.signal,
    });
  } catch (failure) {
    const message = controller.signal.aborted
      ? `timed out after ${client.timeoutMs} ms`
      : failure instanceof Error
        ? failure.message
        : String(failure);
    return { ok: false, reason: 'unavailable', message: `media download failed: ${message}` };
  } finally {
    clearTimeout(headerTimer);
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    // The URL lives 5 minutes; the file itself is kept 30 days: a 404 here means it is gone.
    const reason = response.status === 404 ? 'not_found' : 'unavailable';
    return { ok: false, reason, message: `media download answered HTTP ${response.status}` };
  }
  // A compressed answer (decoded by fetch) declares the compressed length: then only the platform's size holds.
  const encoded = (response.headers.get('content-encoding') ?? 'identity') !== 'identity';
  const contentLength = (encoded ? undefined : declaredLength(response.headers.get('content-length'))) ?? fileSize;
  return {
    ok: true,
    mimeType: mimeType ?? response.headers.get('content-type') ?? 'application/octet-stream',
    ...(contentLength !== undefined ? { contentLength } : {}),
    body: withIdleTimeout(response.body, client.timeoutMs, (reason) => controller.abort(reason)),
  };
}

function firstMessageId(body: unknown): string | undefined {
  if (!isRecord(body) || !Array.isArray(body.messages)) return undefined;
  const first: unknown = body.messages[0];
  return isRecord(first) && typeof first.id === 'string' ? first.id : undefined;
}

function describeError(error: GraphError): string {
  return error.details && error.details !== error.message ? `${error.message}: ${error.details}` : error.message;
}
