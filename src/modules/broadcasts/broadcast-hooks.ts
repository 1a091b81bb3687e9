// Where broadcasts meet the rest of the messaging side: status webhooks move recipients, and every accepted
// hand-off is written into the contact's conversation (decisions §7: `sender: "system"`).
import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { newId } from '../../lib/ids.ts';
import type { MessageStatusListener } from '../../messaging/webhooks.ts';
import type { AcceptedHook } from '../../worker/fanout.ts';
import { findOrCreateConversation, insertMessage } from '../conversations/conversations.repo.ts';
import { applyRecipientStatus } from './recipient-status.ts';

export const recipientStatusListener: MessageStatusListener = (db, orgId, event) =>
  applyRecipientStatus(db, orgId, {
    status: event.status,
    at: event.timestamp,
    platformMessageId: event.platformMessageId,
    callbackData: event.callbackData,
    error: event.error
      ? { code: event.error.code, message: event.error.message ?? event.error.title, reason: event.error.reason }
      : undefined,
  });

export const recordInConversation: AcceptedHook = async (trx: Transaction<DB>, row, platformMessageId, recipient) => {
  const now = new Date();
  const conversationId = await findOrCreateConversation(trx, row.org_id, row.contact_id, row.channel_id, now);
  await insertMessage(trx, {
    org_id: row.org_id,
    id: newId('msg'),
    conversation_id: conversationId,
    contact_id: row.contact_id,
    channel_id: row.channel_id,
    direction: 'outbound',
    sender: 'system', // decisions §7
    type: 'template',
    text: null,
    template_id: row.template_id,
    phone: row.phone,
    platform_message_id: platformMessageId,
    // A status report may have moved the recipient on already (its answer raced ours): the message starts there.
    status: recipient.status === 'sending' ? 'sent' : recipient.status,
    sent_at: now,
    delivered_at: recipient.delivered_at,
    read_at: recipient.read_at,
    error: null,
    created_at: now,
    updated_at: now,
  });
};
