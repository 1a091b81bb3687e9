// The sandbox's operator controls (decisions §9): each turns an operator's request into the platform event the
// real platform would send, and delivers it as a signed webhook through the service's own handler.
import mime from 'mime-types';
import { ApiError, notFound, validationError } from '../../http/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import type { InboundMedia, PlatformEvent, SendFailureReason } from '../platform.ts';
import { type SandboxPlatform, sandboxMediaId } from './sandbox-platform.ts';

export interface ReviewInput {
  event: 'APPROVED' | 'REJECTED' | 'PAUSED' | 'DISABLED';
  reason?: string;
  new_category?: 'MARKETING' | 'UTILITY' | 'AUTHENTICATION';
}

export interface StatusInput {
  status: 'delivered' | 'read' | 'failed';
  error?: string;
}

export const INBOUND_TYPES = ['text', 'image', 'video', 'audio', 'document', 'sticker'] as const;

export interface InboundInput {
  channel_id: string;
  from: string;
  /** decisions §15: `text` by default. */
  type?: (typeof INBOUND_TYPES)[number];
  text?: string;
  /** Where the sandbox gets the file's bytes when the service asks for them. */
  media_url?: string;
  caption?: string;
  filename?: string;
  /** The file's type as the platform announces it; by default from the file name or URL, else the type's usual. */
  mime_type?: string;
  /** The platform message id this one answers (`context.id`). */
  reply_to_platform_message_id?: string;
}

// The type a file is announced with when neither its name nor its URL says: each kind's most usual format.
const usualMimeType: Record<Exclude<InboundInput['type'], 'text' | undefined>, string> = {
  image: 'image/jpeg',
  video: 'video/mp4',
  audio: 'audio/ogg',
  document: 'application/pdf',
  sticker: 'image/webp',
};

/** The platform's rules for what each message type carries, as 422s on the operator's body. */
function checkInbound(input: InboundInput): void {
  const type = input.type ?? 'text';
  const refuse = (field: string, msg: string) => validationError(['body', field], msg, 'value_error');
  if (type === 'text') {
    if (input.text === undefined) throw validationError(['body', 'text'], 'Field required', 'missing');
    for (const field of ['media_url', 'caption', 'filename', 'mime_type'] as const) {
      if (input[field] !== undefined) throw refuse(field, `Only for media messages, not ${type}`);
    }
    return;
  }
  if (input.media_url === undefined) throw validationError(['body', 'media_url'], 'Field required', 'missing');
  if (input.text !== undefined) throw refuse('text', 'A media message carries a caption, not text');
  if (input.caption !== undefined && (type === 'audio' || type === 'sticker')) {
    throw refuse('caption', `The platform carries no caption on ${type}`);
  }
  if (input.filename !== undefined && type !== 'document') throw refuse('filename', 'Only for documents');
}

function inboundMedia(input: InboundInput, type: keyof typeof usualMimeType, url: string): InboundMedia {
  const guessed = mime.lookup(input.filename ?? '') || mime.lookup(new URL(url).pathname) || undefined;
  const mimeType = input.mime_type ?? guessed ?? usualMimeType[type];
  const media: InboundMedia = { platformMediaId: sandboxMediaId({ url, mimeType }), mimeType };
  if (input.caption !== undefined) media.caption = input.caption;
  if (input.filename !== undefined) media.filename = input.filename;
  return media;
}

// The platform's codes for failures named in the service's vocabulary; anything else is a generic 131000.
const failureCodes: Partial<Record<SendFailureReason, { code: number; title: string }>> = {
  not_on_network: { code: 131026, title: 'Message undeliverable' },
  payment_required: { code: 131042, title: 'Business eligibility payment issue' },
  template_paused: { code: 132015, title: 'Template is paused' },
  template_disabled: { code: 132016, title: 'Template is disabled' },
  invalid_parameter: { code: 132000, title: 'Template param count mismatch' },
  rate_limited: { code: 131056, title: 'Pair rate limit hit' },
  // decisions §15: a free-form message outside the customer-service window.
  window_closed: { code: 131047, title: 'Re-engagement message' },
};

/** What the controls need to know about the records they name (implemented by the templates and channels features). */
export interface SandboxLookup {
  /** A live (not deleted) template's platform identity. */
  template(templateId: string): Promise<
    | {
        business_account_id: string;
        platform_template_id: string | null;
        name: string;
        language: string;
        category: string;
      }
    | undefined
  >;
  /** Where an outbound message went: its account, sending number and recipient. */
  outboundMessage(
    platformMessageId: string,
  ): Promise<{ business_account_id: string; phone_number_id: string; phone: string } | undefined>;
  /** A live connected number's platform ids. */
  liveNumber(channelId: string): Promise<{ business_account_id: string; phone_number_id: string } | undefined>;
}

export function createSandboxControls(deps: { clock: Clock; sandbox: SandboxPlatform; lookup: SandboxLookup }) {
  const { clock, sandbox, lookup } = deps;

  return {
    async review(templateId: string, input: ReviewInput) {
      const template = await lookup.template(templateId);
      if (!template) throw notFound();
      if (template.platform_template_id === null) throw new ApiError(409, { code: 'template_not_submitted' });
      const identity = {
        businessAccountId: template.business_account_id,
        platformTemplateId: template.platform_template_id,
        templateName: template.name,
        language: template.language,
      };
      const events: PlatformEvent[] = [
        { kind: 'template_status', ...identity, event: input.event, ...(input.reason ? { reason: input.reason } : {}) },
      ];
      if (input.new_category) {
        events.push({
          kind: 'template_category',
          ...identity,
          previousCategory: template.category,
          newCategory: input.new_category,
        });
      }
      return { webhook: await sandbox.deliver(events) };
    },

    async messageStatus(platformMessageId: string, input: StatusInput) {
      const known = await lookup.outboundMessage(platformMessageId);
      const accepted = sandbox.acceptedMessage(platformMessageId);
      const target = known
        ? { businessAccountId: known.business_account_id, phoneNumberId: known.phone_number_id, to: known.phone }
        : accepted;
      if (!target || target.businessAccountId === '') throw notFound();
      const event: PlatformEvent = {
        kind: 'message_status',
        businessAccountId: target.businessAccountId,
        phoneNumberId: target.phoneNumberId,
        platformMessageId,
        status: input.status,
        recipient: target.to,
        timestamp: clock.now(),
      };
      if (input.status === 'failed') {
        const reason = (input.error ?? 'platform_error') as SendFailureReason;
        const known = failureCodes[reason];
        event.error = known
          ? { code: known.code, title: known.title, message: known.title, reason }
          : {
              code: 131000,
              title: 'Something went wrong',
              message: input.error ?? 'Something went wrong',
              reason: 'platform_error',
            };
      }
      return { webhook: await sandbox.deliver([event]) };
    },

    async inbound(input: InboundInput) {
      checkInbound(input);
      const channel = await lookup.liveNumber(input.channel_id);
      if (!channel) throw notFound();
      const platformMessageId = sandbox.newMessageId();
      const type = input.type ?? 'text';
      const event: PlatformEvent = {
        kind: 'inbound_message',
        businessAccountId: channel.business_account_id,
        phoneNumberId: channel.phone_number_id,
        platformMessageId,
        from: input.from,
        type,
        timestamp: clock.now(),
      };
      if (type === 'text') event.text = input.text as string;
      else {
        event.media = inboundMedia(input, type, input.media_url as string);
        if (input.caption !== undefined) event.text = input.caption;
      }
      if (input.reply_to_platform_message_id !== undefined) {
        event.replyToPlatformMessageId = input.reply_to_platform_message_id;
      }
      const webhook = await sandbox.deliver([event]);
      return { platform_message_id: platformMessageId, webhook };
    },
  };
}

export type SandboxControls = ReturnType<typeof createSandboxControls>;
