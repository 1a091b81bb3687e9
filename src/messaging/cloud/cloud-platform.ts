// The messaging port over the WhatsApp Business Cloud API (Graph API). Wire shapes only: no retries, no storage.
// Every method answers with a result value; nothing here throws on a platform or network fault.

import type {
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
import { toWireTemplateMessage } from './send-wire.ts';

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
    submitTemplate: (submission) => submitTemplate(client, submission),
    deleteTemplate: (deletion) => deleteTemplate(client, deletion),
    sendTemplate: (message) => sendTemplate(client, message),
    markRead: (receipt) => markRead(client, receipt),
    // issue 17: the replies helper fills these in (text, media `link`, `context.message_id`, Graph media download).
    sendMessage: async () => ({
      ok: false,
      reason: 'platform_error',
      retryable: false,
      message: 'free-form messages: not yet built',
    }),
    downloadMedia: async () => ({ ok: false, reason: 'unavailable', message: 'media download: not yet built' }),
  };
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

async function sendTemplate(client: GraphClientOptions, message: TemplateMessage): Promise<SendResult> {
  const outcome = await callGraph(client, {
    method: 'POST',
    path: `${encodeURIComponent(message.phoneNumberId)}/messages`,
    body: toWireTemplateMessage(message),
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

function firstMessageId(body: unknown): string | undefined {
  if (!isRecord(body) || !Array.isArray(body.messages)) return undefined;
  const first: unknown = body.messages[0];
  return isRecord(first) && typeof first.id === 'string' ? first.id : undefined;
}

function describeError(error: GraphError): string {
  return error.details && error.details !== error.message ? `${error.message}: ${error.details}` : error.message;
}
