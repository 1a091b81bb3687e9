// The messaging platform port: what the service asks of the platform, and what it hears back.
// Adapters: `cloud/` (WhatsApp Business Cloud API over HTTP) and `sandbox/` (built-in simulator).

export type TemplateCategory = 'MARKETING' | 'UTILITY' | 'AUTHENTICATION';

/** A template component as the platform defines it (HEADER, BODY, FOOTER, BUTTONS, CAROUSEL, LIMITED_TIME_OFFER). */
export type TemplateComponent = Record<string, unknown> & { type: string };

export interface TemplateSubmission {
  /** The platform's WhatsApp Business Account id. */
  businessAccountId: string;
  name: string;
  /** Language as the service stores it and the platform expects it in requests: `en_US`. */
  language: string;
  category: TemplateCategory;
  components: TemplateComponent[];
  /** `named` when the body uses named placeholders ({{first_name}}), `positional` for {{1}}. */
  parameterFormat: 'named' | 'positional';
}

export type SubmitTemplateResult =
  | { ok: true; platformTemplateId: string; status: string; category: TemplateCategory }
  /** `unavailable`: no answer, or a server fault; the template was not judged (the caller may try again). */
  | { ok: false; reason: string; code?: number; unavailable?: boolean };

export interface TemplateDeletion {
  businessAccountId: string;
  name: string;
  platformTemplateId: string;
}

/** One fully resolved parameter of a template message, ready for the wire. */
export type SendParameter =
  | { type: 'text'; text: string; parameterName?: string }
  | { type: 'image' | 'video' | 'document'; link: string }
  | { type: 'coupon_code'; couponCode: string }
  | { type: 'limited_time_offer'; expirationTimeMs: number }
  | { type: 'payload'; payload: string }
  /** Catalog (`catalog`) and multi-product (`mpm`) buttons: which products the message shows. */
  | { type: 'action'; action: CatalogAction };

export interface CatalogAction {
  thumbnailProductRetailerId?: string;
  sections?: { title: string; productRetailerIds: string[] }[];
}

/** A send component in the platform's send shape (header/body/button/carousel/limited_time_offer). */
export interface SendComponent {
  type: 'header' | 'body' | 'button' | 'carousel' | 'limited_time_offer';
  subType?: 'url' | 'quick_reply' | 'copy_code' | 'catalog' | 'mpm';
  index?: number;
  parameters?: SendParameter[];
  cards?: { cardIndex: number; components: SendComponent[] }[];
}

export interface TemplateMessage {
  /** The platform's phone number id of the sending number. */
  phoneNumberId: string;
  /** Recipient in E.164 (`+15551234567`). */
  to: string;
  templateName: string;
  language: string;
  components: SendComponent[];
  /**
   * Our own reference for this hand-off, echoed back by the platform in the message's status webhooks
   * (`biz_opaque_callback_data`): it lets an interrupted hand-off be reconciled without sending again.
   */
  callbackData?: string;
}

/** Why a send failed, in the service's own vocabulary. */
export type SendFailureReason =
  | 'not_on_network' // the recipient is not on the chat network (moves the contact to `unavailable`)
  | 'rate_limited' // retryable: back off and try again
  | 'payment_required' // the platform refused for the account's payment state
  | 'template_paused'
  | 'template_disabled'
  | 'invalid_parameter'
  | 'window_closed' // decisions §15: a free-form message outside the contact's 24-hour window (Cloud API 131047)
  | 'platform_error';

export type SendResult =
  | { ok: true; platformMessageId: string }
  | {
      ok: false;
      reason: SendFailureReason;
      retryable: boolean;
      code?: number;
      message: string;
      /**
       * True when the request may have reached the platform but no answer came back (timeout, connection lost):
       * the message may or may not have been accepted, so it must be neither retried nor counted as failed.
       */
      uncertain?: boolean;
    };

/** decisions §15: tells the platform that the contact's message (and every earlier one) was read. */
export interface ReadReceipt {
  phoneNumberId: string;
  /** The contact's newest message, as the platform named it. */
  platformMessageId: string;
}

/** decisions §15: a free-form (non-template) message, answered inside the customer-service window. */
export type FreeformBody =
  | { type: 'text'; text: string; previewUrl?: boolean }
  | {
      type: 'image' | 'video' | 'audio' | 'document';
      /** Where the platform fetches the file (the Cloud API's `link`). */
      link: string;
      caption?: string;
      filename?: string;
    }
  | {
      type: 'image' | 'video' | 'audio' | 'document';
      /** D294: a file given to the platform beforehand (`uploadMedia`; the Cloud API's media `id`). */
      mediaId: string;
      caption?: string;
      filename?: string;
    };

/** D294: a file handed to the platform to send by id (the Cloud API's `POST /{phone_number_id}/media`). */
export interface MediaUpload {
  phoneNumberId: string;
  mimeType: string;
  filename: string;
  bytes: Buffer;
}

export type MediaUploadResult =
  | { ok: true; platformMediaId: string }
  | { ok: false; reason: 'platform_error'; retryable: boolean; code?: number; message: string };

export interface FreeformMessage {
  phoneNumberId: string;
  /** Recipient in E.164 (`+15551234567`). */
  to: string;
  body: FreeformBody;
  /** The platform's id of the message answered (`context.message_id`). */
  replyToPlatformMessageId?: string;
  /** As for templates: echoed back in the status webhooks (`biz_opaque_callback_data`). */
  callbackData?: string;
}

/** An inbound message's file, as the platform names it. */
export interface InboundMedia {
  platformMediaId: string;
  mimeType: string;
  filename?: string;
  caption?: string;
  sha256?: string;
}

/** The bytes of an inbound file, streamed: never a whole file in memory. */
export type MediaDownload =
  | { ok: true; mimeType: string; contentLength?: number; body: ReadableStream<Uint8Array> }
  | { ok: false; reason: 'not_found' | 'unavailable'; message: string };

export interface MessagingPlatform {
  readonly name: 'cloud' | 'sandbox';
  submitTemplate(submission: TemplateSubmission): Promise<SubmitTemplateResult>;
  /** Best effort: never throws; reports whether the platform accepted the deletion. */
  deleteTemplate(deletion: TemplateDeletion): Promise<{ ok: boolean; reason?: string }>;
  sendTemplate(message: TemplateMessage): Promise<SendResult>;
  /** Best effort: never throws; reports whether the platform took the receipt. */
  markRead(receipt: ReadReceipt): Promise<{ ok: boolean; reason?: string }>;
  /** decisions §15: text or media by link, optionally answering a message. Same result shape as templates. */
  sendMessage(message: FreeformMessage): Promise<SendResult>;
  /** D294: gives the platform a file's bytes; answers its id for a media message. */
  uploadMedia(upload: MediaUpload): Promise<MediaUploadResult>;
  /** decisions §15: the bytes of an inbound message's file (Cloud API: media URL lookup, then download with the token). */
  downloadMedia(media: { phoneNumberId: string; platformMediaId: string }): Promise<MediaDownload>;
  /** How this platform's inbound callbacks are read: the inbound processor asks it, knowing no adapter (D333). */
  readonly inbound: InboundReader;
}

/** One entry of an inbound callback: its business account, the platform's time of it, and its events in order. */
export interface InboundEntry {
  businessAccountId: string;
  /** The entry's time, when the platform gave one (template callbacks carry no other timestamp). */
  time: Date | undefined;
  events: PlatformEvent[];
}

/** The platform's inbound callbacks as bytes: the signature over the exact bytes, then the body's entries (D44). */
export interface InboundReader {
  /** Whether the signature header signs these exact bytes with the app secret. */
  verify(rawBody: Buffer, signatureHeader: string, appSecret: string): boolean;
  /** The body's entries in delivery order (a malformed piece skipped); undefined when the body is not JSON. */
  parse(rawBody: Buffer): InboundEntry[] | undefined;
}

// ---- What the platform tells us (its inbound callbacks, read by `inbound`) ----

export type PlatformEvent =
  | {
      kind: 'template_status';
      businessAccountId: string;
      platformTemplateId: string;
      templateName?: string;
      language?: string; // normalised to `en_US`
      /** APPROVED, REJECTED, PAUSED, DISABLED, IN_APPEAL, PENDING_DELETION, … as given. */
      event: string;
      reason?: string;
    }
  | {
      kind: 'template_category';
      businessAccountId: string;
      platformTemplateId: string;
      templateName?: string;
      language?: string;
      previousCategory?: string;
      newCategory: string;
    }
  | {
      kind: 'message_status';
      businessAccountId: string;
      phoneNumberId: string;
      platformMessageId: string;
      status: 'sent' | 'delivered' | 'read' | 'failed';
      recipient: string; // E.164 with the leading +
      timestamp: Date;
      /** The `callbackData` the send carried, when it carried one. */
      callbackData?: string;
      error?: { code?: number; title?: string; message?: string; reason: SendFailureReason };
    }
  | {
      kind: 'inbound_message';
      businessAccountId: string;
      phoneNumberId: string;
      platformMessageId: string;
      from: string; // E.164 with the leading +
      profileName?: string;
      type: string;
      /** A text message's body, or a media message's caption. */
      text?: string;
      /** Present for image, video, audio, document and sticker messages. */
      media?: InboundMedia;
      /** The platform's id of the message this one answers (`context.id`). */
      replyToPlatformMessageId?: string;
      timestamp: Date;
    };
