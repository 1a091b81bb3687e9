// PlatformEvents into the Cloud API's webhook wire shapes: the inverse of webhook-parser. The sandbox builds its
// webhooks here and delivers them signed to the service's own webhook route, so its events take the same path
// (signature, parser, handler) as the real platform's.

import type { PlatformEvent } from '../platform.ts';
import { signPayload } from './webhook-signature.ts';

export interface WebhookBuildOptions {
  /** Entry `time`; default now. */
  time?: Date;
  /** `metadata.display_phone_number` for a phone number id, when known. */
  displayPhoneNumber?: (phoneNumberId: string) => string | undefined;
}

export interface WebhookChange {
  field: string;
  value: Record<string, unknown>;
}

export interface WebhookPayload {
  object: 'whatsapp_business_account';
  entry: { id: string; time: number; changes: WebhookChange[] }[];
}

/** One entry per business account (in first-seen order), one change per event, as the platform batches them. */
export function buildWebhookPayload(events: PlatformEvent[], options: WebhookBuildOptions = {}): WebhookPayload {
  const time = Math.floor((options.time ?? new Date()).getTime() / 1000);
  const entries = new Map<string, WebhookChange[]>();
  for (const event of events) {
    const changes = entries.get(event.businessAccountId) ?? [];
    changes.push(toChange(event, options));
    entries.set(event.businessAccountId, changes);
  }
  return {
    object: 'whatsapp_business_account',
    entry: [...entries].map(([id, changes]) => ({ id, time, changes })),
  };
}

/** The exact bytes to POST and their `X-Hub-Signature-256` header value. */
export function buildSignedWebhook(
  events: PlatformEvent[],
  appSecret: string,
  options: WebhookBuildOptions = {},
): { rawBody: Buffer; signature: string } {
  const rawBody = Buffer.from(JSON.stringify(buildWebhookPayload(events, options)), 'utf8');
  return { rawBody, signature: signPayload(rawBody, appSecret) };
}

function toChange(event: PlatformEvent, options: WebhookBuildOptions): WebhookChange {
  switch (event.kind) {
    case 'template_status':
      return {
        field: 'message_template_status_update',
        value: {
          event: event.event,
          ...templateIdentity(event.platformTemplateId, event.templateName, event.language),
          reason: event.reason ?? 'NONE',
        },
      };
    case 'template_category': {
      const value: Record<string, unknown> = templateIdentity(
        event.platformTemplateId,
        event.templateName,
        event.language,
      );
      if (event.previousCategory !== undefined) value.previous_category = event.previousCategory;
      value.new_category = event.newCategory;
      return { field: 'template_category_update', value };
    }
    case 'message_status': {
      const status: Record<string, unknown> = {
        id: event.platformMessageId,
        status: event.status,
        timestamp: unixSeconds(event.timestamp),
        recipient_id: digits(event.recipient),
      };
      if (event.callbackData !== undefined) status.biz_opaque_callback_data = event.callbackData;
      if (event.error) {
        const error: Record<string, unknown> = {};
        if (event.error.code !== undefined) error.code = event.error.code;
        if (event.error.title !== undefined) error.title = event.error.title;
        if (event.error.message !== undefined) {
          error.message = event.error.message;
          error.error_data = { details: event.error.message };
        }
        status.errors = [error];
      }
      return messagesChange(event.phoneNumberId, options, { statuses: [status] });
    }
    case 'inbound_message': {
      const message: Record<string, unknown> = {
        from: digits(event.from),
        id: event.platformMessageId,
        timestamp: unixSeconds(event.timestamp),
        type: event.type,
      };
      if (event.replyToPlatformMessageId !== undefined) message.context = { id: event.replyToPlatformMessageId };
      if (event.media) {
        // The platform's media shape: the file under its type's key, the caption inside it.
        const file: Record<string, unknown> = { mime_type: event.media.mimeType };
        if (event.media.sha256 !== undefined) file.sha256 = event.media.sha256;
        file.id = event.media.platformMediaId;
        if (event.media.caption !== undefined) file.caption = event.media.caption;
        if (event.media.filename !== undefined) file.filename = event.media.filename;
        message[event.type] = file;
      } else if (event.text !== undefined) message.text = { body: event.text };
      const contact: Record<string, unknown> = { wa_id: digits(event.from) };
      if (event.profileName !== undefined) contact.profile = { name: event.profileName };
      return messagesChange(event.phoneNumberId, options, { contacts: [contact], messages: [message] });
    }
  }
}

function messagesChange(
  phoneNumberId: string,
  options: WebhookBuildOptions,
  rest: Record<string, unknown>,
): WebhookChange {
  const metadata: Record<string, unknown> = {};
  const display = options.displayPhoneNumber?.(phoneNumberId);
  if (display !== undefined) metadata.display_phone_number = digits(display);
  metadata.phone_number_id = phoneNumberId;
  return { field: 'messages', value: { messaging_product: 'whatsapp', metadata, ...rest } };
}

function templateIdentity(id: string, name: string | undefined, language: string | undefined): Record<string, unknown> {
  // The platform sends the template id as a JSON number and the language with a hyphen (`en-US`).
  const numeric = /^\d+$/.test(id) && Number.isSafeInteger(Number(id));
  const value: Record<string, unknown> = { message_template_id: numeric ? Number(id) : id };
  if (name !== undefined) value.message_template_name = name;
  if (language !== undefined) value.message_template_language = language.replace(/_/g, '-');
  return value;
}

function unixSeconds(date: Date): string {
  return String(Math.floor(date.getTime() / 1000));
}

function digits(phone: string): string {
  return phone.replace(/\D/g, '');
}
