// POST /v1/conversations/{id}/messages (decisions §15): the checks in the decided order, the first failure answers;
// then one transaction that writes the message and its hand-off row (and, for a template, takes its price and,
// outside the window, its place in the 24-hour limit), through the messages' one admission step
// (messaging-accounts/admission.ts). A refused request writes nothing. The workers are woken at the commit.
import type { Kysely } from 'kysely';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound, validationError } from '../../http/errors.ts';
import { completeIdempotencyKey, type IdempotencyHold, withIdempotencyKey } from '../../http/idempotency.ts';
import { anywhere, orderedBody } from '../../http/ordered-body.ts';
import { withArticle } from '../../lib/article.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import type { MediaFetcher } from '../../messaging/media/media-fetcher.ts';
import { contactsById } from '../contacts/contact-lookup.repo.ts';
import { findFile } from '../files/files.service.ts';
import { admitMessage, honoursOptOut } from '../messaging-accounts/admission.ts';
import { renderedBody } from '../templates/rendered-body.ts';
import { buildSendComponents, validateRecipientInput } from '../templates/send-requirements.ts';
import { type SendableDeps, sendableTemplate } from '../templates/sendable.ts';
import { type MessageRow, WINDOW_MS } from './conversations.repo.ts';
import { type MessageMedia, messageView } from './message-view.ts';
import * as repo from './replies.repo.ts';
import { MEDIA_REPLY_TYPES, type MediaReplyType, ReplyBody } from './replies.schemas.ts';
import type { ReplyBodyRequest, ReplyRequest } from './reply-handoffs.repo.ts';

export interface RepliesDeps extends SendableDeps {
  db: Kysely<DB>;
  clock: Clock;
  media: MediaFetcher;
  /** Wakes this process's reply hand-off loop at once (other processes hear the commit's notification). */
  wake(): void;
}

const checkReplyBody = orderedBody(ReplyBody);

const isMedia = (type: string): type is MediaReplyType => (MEDIA_REPLY_TYPES as readonly string[]).includes(type);

const TEXT_FIELDS = ['text', 'preview_url'] as const;
const MEDIA_FIELDS = ['media_url', 'file_id', 'caption', 'filename'] as const;
const TEMPLATE_FIELDS = [
  'template_id',
  'variables',
  'url_suffixes',
  'header_media_url',
  'card_media_urls',
  'coupon_code',
  'lto_expiration',
] as const;

/** The body's rules a schema cannot say: which fields each type takes and needs (FastAPI-style 422s). */
function checkShape(body: ReplyBody): void {
  const needed =
    body.type === 'text'
      ? 'text'
      : body.type === 'template'
        ? 'template_id'
        : body.file_id !== undefined
          ? 'file_id'
          : 'media_url';
  if (body[needed] === undefined) {
    throw validationError(['body', needed], 'Field required', 'missing', { input: body });
  }
  // D294: a media reply's file is a URL or an uploaded file, not both.
  if (body.media_url !== undefined && body.file_id !== undefined) {
    throw validationError(['body', 'file_id'], 'Either media_url or file_id, not both', 'value_error', {
      input: body.file_id,
    });
  }
  const allowed = new Set<string>(
    body.type === 'text'
      ? TEXT_FIELDS
      : body.type === 'template'
        ? TEMPLATE_FIELDS
        : MEDIA_FIELDS.filter(
            (field) =>
              (field !== 'caption' || body.type !== 'audio') && (field !== 'filename' || body.type === 'document'),
          ),
  );
  for (const field of [...TEXT_FIELDS, ...MEDIA_FIELDS, ...TEMPLATE_FIELDS]) {
    if (body[field] !== undefined && !allowed.has(field)) {
      throw validationError(['body', field], `Not allowed for ${withArticle(body.type)} message`, 'extra_forbidden', {
        input: body[field],
      });
    }
  }
}

const windowOpen = (lastInboundAt: Date | null, now: Date) =>
  lastInboundAt !== null && lastInboundAt.getTime() + WINDOW_MS > now.getTime();

export function createRepliesService(deps: RepliesDeps) {
  const { db, clock } = deps;

  /** The template part of the checks: as for one send recipient, then the opt-out of a MARKETING template. */
  async function prepareTemplate(orgId: string, context: repo.ReplyContext, body: ReplyBody) {
    const { template, components, catalogSendDefaults, requirements } = await sendableTemplate(
      deps,
      orgId,
      body.template_id as string,
    );
    if (template.account_id !== context.account_id) {
      throw new ApiError(422, {
        code: 'template_not_sendable',
        reason: 'the template belongs to another messaging account than the conversation’s number',
      });
    }
    const contact = (await contactsById(db, orgId, [context.contact_id])).get(context.contact_id) ?? null;
    const checked = validateRecipientInput(requirements, body, contact);
    if (!checked.ok) throw new ApiError(422, checked.error);
    for (const surface of requirements.media) {
      const url = checked.parameters.media[surface.token];
      if (!url) continue;
      const media = await deps.media.check(url, surface.type);
      if (!media.ok) throw new ApiError(422, { code: media.code, token: surface.token, url, reason: media.reason });
    }
    if (honoursOptOut(template.category) && context.opted_out) throw new ApiError(409, { code: 'contact_opted_out' });
    return {
      template,
      components: buildSendComponents(components, checked.parameters, { catalogSendDefaults }),
    };
  }

  async function accept(
    orgId: string,
    conversationId: string,
    raw: unknown,
    authorId: string | null,
    idempotency?: IdempotencyHold,
  ) {
    const context = await repo.findReplyContext(db, orgId, conversationId);
    if (!context) throw notFound();
    // decisions §15: the conversation, then the body (D224).
    checkReplyBody(raw).check(anywhere);
    const body = raw as ReplyBody;
    checkShape(body);
    let replyTo: { id: string; platform_message_id: string | null } | undefined;
    if (body.reply_to !== undefined) {
      replyTo = await repo.findConversationMessage(db, orgId, conversationId, body.reply_to);
      if (!replyTo) {
        throw validationError(['body', 'reply_to'], 'Not a message of this conversation', 'value_error', {
          input: body.reply_to,
        });
      }
    }
    if (context.channel_status !== 'live') {
      throw new ApiError(409, { code: 'channel_unavailable', channel_id: context.channel_id });
    }
    const now = clock.now();
    const open = windowOpen(context.last_inbound_at, now);
    if (body.type !== 'template' && !open) {
      throw new ApiError(409, {
        code: 'conversation_window_closed',
        last_inbound_at: context.last_inbound_at?.toISOString() ?? null,
        window_expires_at: context.last_inbound_at
          ? new Date(context.last_inbound_at.getTime() + WINDOW_MS).toISOString()
          : null,
      });
    }
    const phone = context.contact_phone ?? context.last_phone;
    if (!phone) throw new ApiError(409, { code: 'channel_unavailable', reason: 'the contact has no phone' });

    let media: MessageMedia | null = null;
    let freeform: ReplyBodyRequest | undefined;
    let template: Awaited<ReturnType<typeof prepareTemplate>> | undefined;
    if (body.type === 'text') {
      freeform = { type: 'text', text: body.text as string, ...(body.preview_url ? { previewUrl: true } : {}) };
    } else if (isMedia(body.type) && body.file_id !== undefined) {
      // D294: an uploaded file of this organization, unexpired, of the reply's type.
      const file = await findFile(db, orgId, body.file_id, now);
      if (!file) {
        throw validationError(['body', 'file_id'], 'Not a file of the organization (or expired)', 'value_error', {
          input: body.file_id,
        });
      }
      if (file.type !== body.type) {
        throw new ApiError(422, {
          code: 'media_type_mismatch',
          file_id: file.id,
          reason: `expected ${body.type}, the file is ${withArticle(file.type)} (${file.mime_type})`,
        });
      }
      const filename = body.filename ?? (body.type === 'document' ? file.filename : undefined);
      media = {
        mime_type: file.mime_type,
        filename: filename ?? file.filename,
        caption: body.caption ?? null,
        url: null,
        file_id: file.id,
      };
      freeform = {
        type: body.type,
        fileId: file.id,
        ...(body.caption !== undefined ? { caption: body.caption } : {}),
        ...(filename !== undefined ? { filename } : {}),
      };
    } else if (isMedia(body.type)) {
      const url = body.media_url as string;
      const checked = await deps.media.check(url, body.type);
      if (!checked.ok) throw new ApiError(422, { code: checked.code, url, reason: checked.reason });
      media = {
        mime_type: checked.contentType?.split(';')[0]?.trim() ?? null,
        filename: body.filename ?? null,
        caption: body.caption ?? null,
        url,
      };
      freeform = {
        type: body.type,
        link: url,
        ...(body.caption !== undefined ? { caption: body.caption } : {}),
        ...(body.filename !== undefined ? { filename: body.filename } : {}),
      };
    } else {
      template = await prepareTemplate(orgId, context, body);
    }

    const id = newId('msg');
    const message: MessageRow = {
      org_id: orgId,
      id,
      conversation_id: conversationId,
      contact_id: context.contact_id,
      channel_id: context.channel_id,
      direction: 'outbound',
      sender: body.sender ?? 'agent',
      type: body.type,
      // decisions §19, D240: a template message's text is its body as the contact received it.
      text:
        body.type === 'text'
          ? (body.text as string)
          : template
            ? renderedBody(template.template.components, template.components)
            : (body.caption ?? null),
      template_id: template?.template.id ?? null,
      phone,
      platform_message_id: null,
      status: 'sending',
      error: null,
      error_message: null,
      media,
      platform_media_id: null,
      reply_to: replyTo?.id ?? null,
      window_account_id: null,
      author_id: authorId, // decisions §19: the console's person, null for a key
      private: false,
      received_at: null,
      created_at: now,
      sent_at: null,
      delivered_at: null,
      read_at: null,
      failed_at: null,
      updated_at: now,
    };
    const replyToPlatform = replyTo?.platform_message_id ?? undefined;
    await transactionWithRetry(db, async (trx) => {
      const locked = await repo.lockConversation(trx, orgId, conversationId);
      // decisions §15: a template is charged at its category's price; outside the window it counts against the
      // 24-hour limit (`refuse`), inside it only the balance is checked (`pace`). Text and media are free.
      const { charged, windowAccountId } = await admitMessage(trx, {
        orgId,
        accountId: context.account_id,
        category: template?.template.category ?? null,
        phones: [phone],
        limit: template && !windowOpen(locked.last_inbound_at, clock.now()) ? 'refuse' : 'pace',
        payment: 'now',
      });
      // Set on every run (a deadlock may make this transaction run again).
      message.window_account_id = windowAccountId;
      const request: ReplyRequest = {
        accountId: context.account_id,
        phoneNumberId: context.phone_number_id,
        to: phone,
        charged,
        message: template
          ? {
              kind: 'template',
              templateName: template.template.name,
              language: template.template.language,
              components: template.components,
            }
          : {
              kind: 'freeform',
              body: freeform as ReplyBodyRequest,
              ...(replyToPlatform ? { replyToPlatformMessageId: replyToPlatform } : {}),
            },
      };
      await repo.insertReply(trx, message, request);
      if (idempotency) await completeIdempotencyKey(trx, orgId, idempotency, id);
    });
    deps.wake();
    return messageView(message);
  }

  return {
    /** Accepts a reply; answers the Message (`sending`) and whether it is an idempotent replay. */
    /** `body` is a ReplyBody, validated once the conversation is found (D224). */
    async reply(
      orgId: string,
      conversationId: string,
      body: unknown,
      idempotencyKey: string | undefined,
      authorId: string | null,
    ) {
      const request = { body: { reply_in: conversationId, body }, key: idempotencyKey };
      const { result, replayed } = await withIdempotencyKey(
        db,
        orgId,
        request,
        (held) => accept(orgId, conversationId, body, authorId, held),
        async (messageId) => {
          const row = await repo.findMessage(db, orgId, messageId);
          if (!row) throw notFound();
          return messageView(row);
        },
      );
      return { message: result, replayed };
    },
  };
}

export type RepliesService = ReturnType<typeof createRepliesService>;
