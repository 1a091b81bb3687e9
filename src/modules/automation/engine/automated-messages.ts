// decisions §20: every `system` (rules, away messages) and `ai` (the assistant) message is a reply of §15 with its
// guarantees: written with its hand-off row in the caller's transaction (the one that decided it), handed off once
// by the replies' worker, in order per conversation, free inside the window. Refused — never sent — outside the
// window, to an opted-out contact or on a number no longer live; the caller records why.
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/schema.ts';
import { newId } from '../../../lib/ids.ts';
import { type MessageRow, WINDOW_MS } from '../../conversations/conversations.repo.ts';
import { findReplyContext, insertReply } from '../../conversations/replies.repo.ts';
import type { ReplyRequest } from '../../conversations/reply-handoffs.repo.ts';
import { admitMessage } from '../../messaging-accounts/admission.ts';

export type AutomatedOutcome = { sent: true; messageId: string } | { sent: false; reason: SkipReason };
export type SkipReason = 'window_closed' | 'opted_out' | 'channel_unavailable';

/** Queues a text message from `sender` in the caller's transaction, or answers why it may not be sent. */
export async function queueAutomatedText(
  trx: Kysely<DB>,
  orgId: string,
  conversationId: string,
  text: string,
  sender: 'system' | 'ai',
  now: Date,
): Promise<AutomatedOutcome> {
  const context = await findReplyContext(trx, orgId, conversationId);
  if (context?.channel_status !== 'live') return { sent: false, reason: 'channel_unavailable' };
  if (context.opted_out) return { sent: false, reason: 'opted_out' };
  const inbound = context.last_inbound_at;
  if (inbound === null || inbound.getTime() + WINDOW_MS <= now.getTime())
    return { sent: false, reason: 'window_closed' };
  const phone = context.contact_phone ?? context.last_phone;
  if (!phone) return { sent: false, reason: 'channel_unavailable' };
  const message: MessageRow = {
    org_id: orgId,
    id: newId('msg'),
    conversation_id: conversationId,
    contact_id: context.contact_id,
    channel_id: context.channel_id,
    direction: 'outbound',
    sender,
    type: 'text',
    text,
    template_id: null,
    phone,
    platform_message_id: null,
    status: 'sending',
    error: null,
    error_message: null,
    media: null,
    platform_media_id: null,
    reply_to: null,
    window_account_id: null,
    author_id: null,
    private: false,
    received_at: null,
    created_at: now,
    sent_at: null,
    delivered_at: null,
    read_at: null,
    failed_at: null,
    updated_at: now,
  };
  // Through the one admission of outbound messages: a free-form text inside the window is free and takes no place in
  // the 24-hour limit (decisions §15); never a template.
  const { charged } = await admitMessage(trx, {
    orgId,
    accountId: context.account_id,
    category: null,
    phones: [phone],
    limit: 'pace',
    payment: 'now',
  });
  const request: ReplyRequest = {
    accountId: context.account_id,
    phoneNumberId: context.phone_number_id,
    to: phone,
    charged,
    message: { kind: 'freeform', body: { type: 'text', text } },
  };
  await insertReply(trx, message, request);
  return { sent: true, messageId: message.id };
}
