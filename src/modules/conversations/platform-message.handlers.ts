// The conversations feature's answers to the platform: an inbound message (the contact, made when the phone is
// new; the conversation with that number; the message, decisions §7: `sender: "contact"`), and status reports,
// which move an outbound message forward only.
import { newId } from '../../lib/ids.ts';
import type { PlatformEventHandler, PlatformEventHandlers } from '../../messaging/inbound.ts';
import { isForward } from '../../messaging/message-status.ts';
import { contactsForPhones, optOutKeyword, recordOptOut, recordReachability } from '../contacts/contact-intake.ts';
import { readContact } from '../contacts/contact-view.ts';
import { recordEvents } from '../events/events.ts';
import type { ConversationChanges } from './conversation-changes.ts';
import * as conversations from './conversations.repo.ts';
import { messageEventData } from './message-view.ts';
import { settleLateReply, settleReplyHandoff } from './reply-handoffs.repo.ts';
import { parseReplyReference, replyError } from './reply-rules.ts';

const applyInboundMessage =
  (changes: ConversationChanges): PlatformEventHandler<'inbound_message'> =>
  async (trx, event, { orgId, channelId, receivedAt }) => {
    if (!channelId) return 'unmatched';
    const at = event.timestamp;
    // Not one of the named acquisition categories: the person wrote to a connected number. The channel is kept by
    // the conversation, not in `origin` (contract: origin is the category, set once at first touch).
    const contacts = await contactsForPhones(trx, orgId, [{ phone: event.from, firstName: event.profileName }], {
      origin: 'OTHER',
      at,
    });
    const contact = contacts.get(event.from) as { id: string };
    const conversationId = await conversations.findOrCreateConversation(trx, orgId, contact.id, channelId, at);
    // decisions §15: the file as the Message shows it (its bytes stay at the platform until asked for: `url` null).
    const media = event.media
      ? {
          mime_type: event.media.mimeType,
          filename: event.media.filename ?? null,
          caption: event.media.caption ?? null,
          url: null,
        }
      : null;
    // The message answered, when it is one of this conversation's.
    const replyTo = event.replyToPlatformMessageId
      ? await conversations.findMessageIdByPlatformId(trx, orgId, conversationId, event.replyToPlatformMessageId)
      : undefined;
    const message = {
      id: newId('msg'),
      conversation_id: conversationId,
      contact_id: contact.id,
      channel_id: channelId,
      direction: 'inbound',
      sender: 'contact', // decisions §7
      type: event.type,
      text: event.text ?? null,
      template_id: null,
      phone: event.from,
      platform_message_id: event.platformMessageId,
      status: 'received',
      error: null,
      error_message: null,
      media,
      reply_to: replyTo ?? null,
      author_id: null,
      private: false,
      created_at: at,
    };
    const inserted = await conversations.insertMessage(trx, {
      ...message,
      media: media ? JSON.stringify(media) : null,
      platform_media_id: event.media?.platformMediaId ?? null,
      org_id: orgId,
      // D292: the server's moment of receipt, which a resolve racing this message compares with.
      received_at: receivedAt,
      updated_at: at,
    });
    // decisions §11: `message.received`, the Message as the conversation lists it; a redelivered webhook inserts
    // nothing and emits nothing.
    if (inserted) {
      const data = {
        ...message,
        created_at: at.toISOString(),
        sent_at: null,
        delivered_at: null,
        read_at: null,
        failed_at: null,
      } as const;
      await recordEvents(trx, orgId, [{ type: 'message.received', data }]);
      await changes.reopenOnContactMessage(trx, orgId, conversationId, at);
    }
    await applyOptOutKeyword(trx, orgId, contact.id, event.text, at);
    return 'applied';
  };

/** decisions §14: STOP and its kin opt the contact out, START and UNSTOP back in; §11: `contact.updated`. */
async function applyOptOutKeyword(
  trx: Parameters<PlatformEventHandler<'inbound_message'>>[0],
  orgId: string,
  contactId: string,
  text: string | null | undefined,
  at: Date,
) {
  const optedOut = optOutKeyword(text);
  if (optedOut === undefined || !(await recordOptOut(trx, orgId, contactId, optedOut, at))) return;
  const contact = await readContact(trx, orgId, contactId);
  if (contact) await recordEvents(trx, orgId, [{ type: 'contact.updated', data: contact }], at);
}

const applyMessageStatus: PlatformEventHandler<'message_status'> = async (trx, event, { orgId, receivedAt }) => {
  let message = await conversations.lockMessageByPlatformId(trx, orgId, event.platformMessageId);
  // A reply whose hand-off answer was lost is found by our callback reference (decisions §15).
  const replyId = message ? undefined : parseReplyReference(event.callbackData, orgId);
  if (replyId) message = await conversations.lockUnnamedMessage(trx, orgId, replyId, event.platformMessageId);
  if (!message) return 'unmatched';
  const at = event.timestamp;
  // A reply of §15: an agent's or the assistant's, or (decisions §20) a rule's or away message's `system` text — a
  // broadcast's `system` messages are templates, recorded by the fan-out.
  const reply =
    message.direction === 'outbound' &&
    (message.sender === 'agent' ||
      message.sender === 'ai' ||
      (message.sender === 'system' && message.type !== 'template'));
  // decisions D176: a reply that failed only because its hand-off's answer was lost did reach the platform if it
  // reports it sent, delivered or read: it moves on, charged again (settleLateReply); no other failure is undone.
  const late =
    reply &&
    event.status !== 'failed' &&
    message.status === 'failed' &&
    message.error === 'handoff_unconfirmed' &&
    (await settleLateReply(trx, orgId, message));
  // A note (status null) never reaches the platform, so no report can name one: stale if it ever did.
  if (!late && (message.status === null || !isForward(message.status, event.status))) {
    // A delivery report that arrives after the read report still tells when it was delivered.
    if (event.status === 'delivered' && message.status === 'read' && message.delivered_at === null) {
      await conversations.updateMessage(trx, orgId, message.id, { delivered_at: at, updated_at: receivedAt });
    }
    return 'stale';
  }
  const changes = {
    sent: { status: 'sent', sent_at: at },
    delivered: { status: 'delivered', delivered_at: at },
    // read implies delivered
    read: { status: 'read', read_at: at, delivered_at: message.delivered_at ?? at },
    failed: {
      status: 'failed',
      failed_at: at,
      // D134: the stable code, and the platform's own words beside it.
      error: reply ? replyError(event.error?.reason, event.error?.code) : (event.error?.reason ?? 'platform_error'),
      error_message: event.error?.message ?? event.error?.title ?? null,
    },
  }[event.status];
  // A report about a reply still `sending` settles its hand-off: it reached the platform.
  const settles = message.status === 'sending';
  const named = message.platform_message_id === null ? { platform_message_id: event.platformMessageId } : {};
  const sentAt = (settles || late) && event.status !== 'failed' ? { sent_at: message.sent_at ?? at } : {};
  const unfailed = late ? { error: null, error_message: null, failed_at: null } : {};
  const updated = await conversations.updateMessage(trx, orgId, message.id, {
    ...sentAt,
    ...changes,
    ...named,
    ...unfailed,
    updated_at: receivedAt,
  });
  if (reply) {
    if (settles) await settleReplyHandoff(trx, orgId, message.id);
    // decisions §15: `message.updated`, each time a reply moves.
    if (updated)
      await recordEvents(trx, orgId, [{ type: 'message.updated', data: messageEventData(updated) }], receivedAt);
  }
  // As the platform's answer would have (recordAccepted): the contact was reached.
  if (late && updated) await recordReachability(trx, orgId, [{ contactId: message.contact_id, outcome: 'reached' }]);
  if (event.status === 'failed' && event.error?.reason === 'not_on_network') {
    await recordReachability(trx, orgId, [{ contactId: message.contact_id, outcome: 'not_on_network' }]);
  }
  return 'applied';
};

/** The handlers, with §19's change functions (D350: given by the wiring). */
export const conversationMessageHandlers = (changes: ConversationChanges): PlatformEventHandlers => ({
  inbound_message: [applyInboundMessage(changes)],
  message_status: [applyMessageStatus],
});
