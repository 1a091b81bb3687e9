// Cloud API webhooks (`{object: "whatsapp_business_account", entry: [{id, changes: [{field, value}]}]}`) into
// the port's PlatformEvents. Deliveries are batched (many entries, many changes, many statuses); a piece that is
// malformed or of a kind we do not handle is skipped so that the rest of the batch still applies. Never throws.

import type { InboundEntry, InboundMedia, InboundReader, PlatformEvent } from '../platform.ts';
import { isRecord } from './graph-client.ts';
import { classifyPlatformError } from './platform-errors.ts';

export { buildSignedWebhook, buildWebhookPayload } from './webhook-builder.ts';

import { verifySignature } from './webhook-signature.ts';

export { signPayload, verifySignature } from './webhook-signature.ts';

type Fields = Record<string, unknown>;
const messageStatuses = ['sent', 'delivered', 'read', 'failed'] as const;

export function parseWebhook(body: unknown): PlatformEvent[] {
  return parseWebhookEntries(body).flatMap((entry) => entry.events);
}

/** One parsed entry: its business account, the entry's `time` (Unix seconds on the wire), and its events in order. */
export type WebhookEntry = InboundEntry;

/** Like parseWebhook, keeping each entry's time: template webhooks are ordered by it (they arrive out of order). */
export function parseWebhookEntries(body: unknown): WebhookEntry[] {
  const entries: WebhookEntry[] = [];
  try {
    if (!isRecord(body) || !Array.isArray(body.entry)) return entries;
    for (const entry of body.entry) {
      if (!isRecord(entry)) continue;
      const businessAccountId = idString(entry.id);
      if (businessAccountId === undefined || !Array.isArray(entry.changes)) continue;
      const events: PlatformEvent[] = [];
      for (const change of entry.changes) {
        if (!isRecord(change) || !isRecord(change.value)) continue;
        events.push(...parseChange(businessAccountId, change.field, change.value));
      }
      entries.push({ businessAccountId, time: secondsToDate(entry.time), events });
    }
  } catch {
    // Defensive only (getters on exotic inputs): a webhook must be acknowledged, never crash the handler.
  }
  return entries;
}

/**
 * JSON.parse that keeps integers too large for a double (template ids can reach 16+ digits) as their exact digits.
 * Use it on the raw webhook body before parseWebhook.
 */
export function parseWebhookJson(raw: string): unknown {
  const reviver = (_key: string, value: unknown, context?: { source?: string }): unknown => {
    // PostgreSQL cannot store U+0000: a text carrying one would fail the whole delivery, over and over.
    if (typeof value === 'string') return value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
    return typeof value === 'number' && !Number.isSafeInteger(value) && /^\d+$/.test(context?.source ?? '')
      ? context?.source
      : value;
  };
  return JSON.parse(raw, reviver as (key: string, value: unknown) => unknown);
}

/** The Cloud API's callbacks as the platform port reads them (D333); the sandbox sends the same signed bytes. */
export const cloudInbound: InboundReader = {
  verify: (rawBody, signatureHeader, appSecret) => verifySignature(rawBody, signatureHeader, appSecret),
  parse(rawBody) {
    let body: unknown;
    try {
      body = parseWebhookJson(rawBody.toString('utf8'));
    } catch {
      return undefined;
    }
    return parseWebhookEntries(body);
  },
};

function parseChange(businessAccountId: string, field: unknown, value: Fields): PlatformEvent[] {
  switch (field) {
    case 'message_template_status_update':
      return optional(templateStatus(businessAccountId, value));
    case 'template_category_update':
      return optional(templateCategory(businessAccountId, value));
    case 'messages':
      return messagesChange(businessAccountId, value);
    default:
      return [];
  }
}

function templateStatus(businessAccountId: string, value: Fields): PlatformEvent | undefined {
  const platformTemplateId = idString(value.message_template_id);
  // Some template webhooks (quality or component updates) share the field but carry no `event`: nothing to apply.
  if (platformTemplateId === undefined || !nonEmptyString(value.event)) return undefined;
  const event: PlatformEvent = { kind: 'template_status', businessAccountId, platformTemplateId, event: value.event };
  if (nonEmptyString(value.message_template_name)) event.templateName = value.message_template_name;
  const language = normaliseLanguage(value.message_template_language);
  if (language !== undefined) event.language = language;
  // The platform sends reason "NONE" with approvals; that is not a reason.
  if (nonEmptyString(value.reason) && value.reason !== 'NONE') event.reason = value.reason;
  return event;
}

function templateCategory(businessAccountId: string, value: Fields): PlatformEvent | undefined {
  const platformTemplateId = idString(value.message_template_id);
  if (platformTemplateId === undefined || !nonEmptyString(value.new_category)) return undefined;
  // An impending change (`correct_category`, due in 24 h) repeats the CURRENT category as `new_category`:
  // nothing has changed yet, and the completed change will arrive as its own webhook.
  if (value.correct_category !== undefined && value.previous_category === undefined) return undefined;
  const event: PlatformEvent = {
    kind: 'template_category',
    businessAccountId,
    platformTemplateId,
    newCategory: value.new_category,
  };
  if (nonEmptyString(value.message_template_name)) event.templateName = value.message_template_name;
  const language = normaliseLanguage(value.message_template_language);
  if (language !== undefined) event.language = language;
  if (nonEmptyString(value.previous_category)) event.previousCategory = value.previous_category;
  return event;
}

function messagesChange(businessAccountId: string, value: Fields): PlatformEvent[] {
  const metadata = isRecord(value.metadata) ? value.metadata : {};
  const phoneNumberId = idString(metadata.phone_number_id);
  if (phoneNumberId === undefined) return [];
  const events: PlatformEvent[] = [];
  for (const status of arrayOf(value.statuses)) {
    const event = messageStatus(businessAccountId, phoneNumberId, status);
    if (event) events.push(event);
  }
  const contacts = arrayOf(value.contacts);
  for (const message of arrayOf(value.messages)) {
    const event = inboundMessage(businessAccountId, phoneNumberId, message, contacts);
    if (event) events.push(event);
  }
  return events;
}

function messageStatus(businessAccountId: string, phoneNumberId: string, status: Fields): PlatformEvent | undefined {
  const kind = messageStatuses.find((known) => known === status.status);
  const platformMessageId = status.id;
  const recipient = e164(status.recipient_id);
  const timestamp = secondsToDate(status.timestamp);
  // `deleted` and `warning` statuses, and anything without id/recipient/time, say nothing we can apply.
  if (!kind || !nonEmptyString(platformMessageId) || !recipient || !timestamp) return undefined;
  const event: PlatformEvent = {
    kind: 'message_status',
    businessAccountId,
    phoneNumberId,
    platformMessageId,
    status: kind,
    recipient,
    timestamp,
  };
  if (nonEmptyString(status.biz_opaque_callback_data)) event.callbackData = status.biz_opaque_callback_data;
  const [first] = arrayOf(status.errors);
  if (first) {
    const code = typeof first.code === 'number' ? first.code : undefined;
    const details = isRecord(first.error_data) ? first.error_data.details : undefined;
    const message = nonEmptyString(first.message) ? first.message : nonEmptyString(details) ? details : undefined;
    event.error = { reason: classifyPlatformError(code, undefined).reason };
    if (code !== undefined) event.error.code = code;
    if (nonEmptyString(first.title)) event.error.title = first.title;
    if (message !== undefined) event.error.message = message;
  }
  return event;
}

function inboundMessage(
  businessAccountId: string,
  phoneNumberId: string,
  message: Fields,
  contacts: Fields[],
): PlatformEvent | undefined {
  const from = e164(message.from);
  const timestamp = secondsToDate(message.timestamp);
  if (!from || !nonEmptyString(message.id) || !nonEmptyString(message.type) || !timestamp) return undefined;
  const event: PlatformEvent = {
    kind: 'inbound_message',
    businessAccountId,
    phoneNumberId,
    platformMessageId: message.id,
    from,
    type: message.type,
    timestamp,
  };
  const media = inboundMedia(message);
  if (media) event.media = media;
  const text = media ? media.caption : messageText(message);
  if (text !== undefined) event.text = text;
  // A reply names the message it answers in `context.id` (a quick-reply button's tap names the template message).
  const context = isRecord(message.context) ? message.context : undefined;
  if (context && nonEmptyString(context.id)) event.replyToPlatformMessageId = context.id;
  const contact = contacts.find((candidate) => e164(candidate.wa_id) === from) ?? contacts[0];
  const profile = contact && isRecord(contact.profile) ? contact.profile : undefined;
  if (profile && nonEmptyString(profile.name)) event.profileName = profile.name;
  return event;
}

const mediaTypes = new Set(['image', 'video', 'audio', 'document', 'sticker']);

/** decisions §15: an image, video, audio, document or sticker message's file, under the key named by its type. */
function inboundMedia(message: Fields): InboundMedia | undefined {
  if (typeof message.type !== 'string' || !mediaTypes.has(message.type)) return undefined;
  const file = message[message.type];
  if (!isRecord(file)) return undefined;
  const id = idString(file.id);
  if (id === undefined) return undefined;
  const media: InboundMedia = {
    platformMediaId: id,
    mimeType: nonEmptyString(file.mime_type) ? file.mime_type : 'application/octet-stream',
  };
  if (nonEmptyString(file.filename)) media.filename = file.filename;
  if (nonEmptyString(file.caption)) media.caption = file.caption;
  if (nonEmptyString(file.sha256)) media.sha256 = file.sha256;
  return media;
}

// Text for the conversation history: typed text, or the label of a tapped template quick-reply button.
function messageText(message: Fields): string | undefined {
  if (isRecord(message.text) && typeof message.text.body === 'string') return message.text.body;
  if (isRecord(message.button) && typeof message.button.text === 'string') return message.button.text;
  return undefined;
}

function arrayOf(value: unknown): Fields[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

function optional(event: PlatformEvent | undefined): PlatformEvent[] {
  return event ? [event] : [];
}

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

// Ids arrive as strings, except message_template_id, which is a JSON number.
function idString(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  return undefined;
}

function normaliseLanguage(value: unknown): string | undefined {
  return nonEmptyString(value) ? value.replace(/-/g, '_') : undefined;
}

function e164(value: unknown): string | undefined {
  const digits = typeof value === 'string' || typeof value === 'number' ? String(value).replace(/^\+/, '') : '';
  return /^[1-9]\d{1,14}$/.test(digits) ? `+${digits}` : undefined;
}

// Timestamps are Unix seconds, as a string in message webhooks (a number in some older payloads).
function secondsToDate(value: unknown): Date | undefined {
  const seconds =
    typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  return Number.isFinite(seconds) ? new Date(seconds * 1000) : undefined;
}
