// Applying one parsed platform event to the database, inside the transaction that recorded it as processed.
// Every function answers `applied`, `stale` (known, but older than what is stored: nothing moves backwards) or
// `unmatched` (nothing here names it: the caller rolls back so that a later delivery can still apply).
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { newId } from '../lib/ids.ts';
import { findOrCreateContactByPhone } from '../modules/conversations/contact-by-phone.ts';
import * as conversations from '../modules/conversations/conversations.repo.ts';
import * as templates from '../modules/templates/templates.repo.ts';
import type { PlatformEvent } from './platform.ts';

export type ApplyOutcome = 'applied' | 'stale' | 'unmatched';

export type TemplateStatusEvent = Extract<PlatformEvent, { kind: 'template_status' }>;
export type TemplateCategoryEvent = Extract<PlatformEvent, { kind: 'template_category' }>;
export type MessageStatusEvent = Extract<PlatformEvent, { kind: 'message_status' }>;
export type InboundMessageEvent = Extract<PlatformEvent, { kind: 'inbound_message' }>;

/**
 * Hook for other records that follow message statuses (broadcast recipients, issue 5). Runs in the same
 * transaction as the messages-table update; the event counts as matched when any listener or the table matched.
 */
export type MessageStatusListener = (db: Kysely<DB>, orgId: string, event: MessageStatusEvent) => Promise<ApplyOutcome>;

/**
 * The stored status a template-status event leads to; undefined leaves the status as it is. Events that are not
 * states (the platform says the template stays APPROVED through FLAGGED, LOCKED, UNLOCKED) change nothing;
 * REINSTATED and UNARCHIVED return it to APPROVED; anything else is stored as given.
 */
export function templateStatusFor(event: string): string | undefined {
  const upper = event.toUpperCase();
  if (['FLAGGED', 'LOCKED', 'UNLOCKED'].includes(upper)) return undefined;
  if (upper === 'REINSTATED' || upper === 'UNARCHIVED') return 'APPROVED';
  return upper;
}

export async function applyTemplateStatus(
  db: Kysely<DB>,
  orgId: string,
  event: TemplateStatusEvent,
  occurredAt: Date | undefined,
  now: Date,
): Promise<ApplyOutcome> {
  const rows = await templates.lockTemplateByPlatformId(db, orgId, event.businessAccountId, event.platformTemplateId);
  if (rows.length === 0) return 'unmatched';
  const status = templateStatusFor(event.event);
  let outcome: ApplyOutcome = 'stale';
  for (const row of rows) {
    // Template states go back and forth (APPROVED, PAUSED, APPROVED): order by the platform's time, not by rank.
    if (occurredAt && row.status_event_at && occurredAt.getTime() < row.status_event_at.getTime()) continue;
    if (status === undefined) continue;
    await templates.updateTemplateById(db, orgId, row.id, {
      status,
      ...(status === 'REJECTED' ? { rejected_reason: event.reason ?? null } : {}),
      ...(status === 'APPROVED' ? { rejected_reason: null } : {}),
      ...(occurredAt ? { status_event_at: occurredAt } : {}),
      updated_at: now,
    });
    outcome = 'applied';
  }
  return outcome;
}

export async function applyTemplateCategory(
  db: Kysely<DB>,
  orgId: string,
  event: TemplateCategoryEvent,
  now: Date,
): Promise<ApplyOutcome> {
  const rows = await templates.lockTemplateByPlatformId(db, orgId, event.businessAccountId, event.platformTemplateId);
  if (rows.length === 0) return 'unmatched';
  // contract: the stored category follows the platform's re-categorisation.
  for (const row of rows) {
    await templates.updateTemplateById(db, orgId, row.id, {
      category: event.newCategory.toUpperCase(),
      updated_at: now,
    });
  }
  return 'applied';
}

// contract: sending -> sent -> delivered -> read, and sending/sent -> failed. A status is applied only from the
// states listed before it, so a late or repeated report never moves a message backwards.
const allowedFrom: Record<MessageStatusEvent['status'], string[]> = {
  sent: ['sending'],
  delivered: ['sending', 'sent'],
  read: ['sending', 'sent', 'delivered'],
  failed: ['sending', 'sent'],
};

export async function applyMessageStatus(
  db: Kysely<DB>,
  orgId: string,
  event: MessageStatusEvent,
  now: Date,
): Promise<ApplyOutcome> {
  const message = await conversations.lockMessageByPlatformId(db, orgId, event.platformMessageId);
  if (!message) return 'unmatched';
  const at = event.timestamp;
  if (!allowedFrom[event.status].includes(message.status)) {
    // A delivery report that arrives after the read report still tells when it was delivered.
    if (event.status === 'delivered' && message.status === 'read' && message.delivered_at === null) {
      await conversations.updateMessage(db, orgId, message.id, { delivered_at: at, updated_at: now });
    }
    return 'stale';
  }
  switch (event.status) {
    case 'sent':
      await conversations.updateMessage(db, orgId, message.id, { status: 'sent', sent_at: at, updated_at: now });
      break;
    case 'delivered':
      await conversations.updateMessage(db, orgId, message.id, {
        status: 'delivered',
        delivered_at: at,
        updated_at: now,
      });
      break;
    case 'read':
      await conversations.updateMessage(db, orgId, message.id, {
        status: 'read',
        read_at: at,
        delivered_at: message.delivered_at ?? at, // read implies delivered
        updated_at: now,
      });
      break;
    case 'failed':
      await conversations.updateMessage(db, orgId, message.id, {
        status: 'failed',
        failed_at: at,
        error: event.error?.reason ?? 'platform_error',
        updated_at: now,
      });
      if (event.error?.reason === 'not_on_network') {
        await conversations.markContactUnavailable(db, orgId, message.contact_id, now);
      }
      break;
  }
  return 'applied';
}

export async function applyInboundMessage(
  db: Kysely<DB>,
  orgId: string,
  channelId: string,
  event: InboundMessageEvent,
): Promise<ApplyOutcome> {
  const at = event.timestamp;
  const contact = await findOrCreateContactByPhone(db, orgId, {
    phone: event.from,
    profileName: event.profileName,
    now: at,
  });
  const conversationId = await conversations.findOrCreateConversation(db, orgId, contact.id, channelId, at);
  await conversations.insertMessage(db, {
    org_id: orgId,
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
    created_at: at,
    updated_at: at,
  });
  return 'applied';
}
