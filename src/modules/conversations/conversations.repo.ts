// SQL for conversations and their messages. Every query filters by org_id.
import { type Insertable, type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import type { ConversationsTable, DB, MessagesTable } from '../../db/schema.ts';

type ConversationStatus = Selectable<ConversationsTable>['status'];
type Priority = Selectable<ConversationsTable>['priority'];

import { newId } from '../../lib/ids.ts';

export type MessageRow = Selectable<MessagesTable>;

/** Keyset position: (time, id) of the last row of the previous page, newest first. */
export type Position = [Date, string];

/** decisions §15: the customer-service window lasts 24 hours from the contact's newest message. */
export const WINDOW_MS = 24 * 60 * 60 * 1000;

export interface ConversationFilter {
  contact_id?: string | undefined;
  channel_id?: string | undefined;
  unread?: boolean | undefined;
  /** `open` or `closed` at `now`. */
  window?: { open: boolean; now: Date } | undefined;
  /** decisions §19. */
  status?: string[] | undefined;
  /** `unassigned`, `ai` or a user id. */
  assignee?: string | undefined;
  team_id?: string | undefined;
  label?: string | undefined;
  priority?: string | undefined;
}

/**
 * decisions §19: where a page starts. Newest activity first: after `(last_activity_at, id)`. Oldest waiting first:
 * after `(waiting_since, created_at, id)`, with the conversations not waiting (null) after every waiting one.
 */
export type ListPosition =
  | { sort: 'last_activity_at'; at: Date; id: string }
  | { sort: 'waiting_since'; waiting: Date | null; created: Date; id: string };

/**
 * decisions §19: a conversation with its contact and newest message (notes included), so that a list needs no
 * request per row: one statement, the contact by its primary key and the newest message by the conversation's
 * message index, for each row of the page.
 */
export function selectConversations(db: Kysely<DB>, orgId: string) {
  return db
    .selectFrom('conversations as cv')
    .innerJoin('contacts as ct', (join) =>
      join.onRef('ct.org_id', '=', 'cv.org_id').onRef('ct.id', '=', 'cv.contact_id'),
    )
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('messages as m')
          .select(['m.id', 'm.sender', 'm.type', 'm.text', 'm.private', 'm.created_at'])
          .whereRef('m.org_id', '=', 'cv.org_id')
          .whereRef('m.conversation_id', '=', 'cv.id')
          .orderBy('m.created_at', 'desc')
          .orderBy('m.id', 'desc')
          .limit(1)
          .as('lm'),
      (join) => join.onTrue(),
    )
    .selectAll('cv')
    .select([
      'ct.first_name as contact_first_name',
      'ct.last_name as contact_last_name',
      'ct.phone as contact_phone',
      'lm.id as last_message_id',
      'lm.sender as last_message_sender',
      'lm.type as last_message_type',
      'lm.text as last_message_text',
      'lm.private as last_message_private',
      'lm.created_at as last_message_created_at',
    ])
    .where('cv.org_id', '=', orgId);
}

export type ConversationRow = NonNullable<Awaited<ReturnType<typeof findConversation>>>;

export function listConversations(
  db: Kysely<DB>,
  orgId: string,
  filter: ConversationFilter,
  limit: number,
  sort: 'last_activity_at' | 'waiting_since',
  after?: ListPosition,
) {
  let query = selectConversations(db, orgId).limit(limit);
  query =
    sort === 'waiting_since'
      ? query.orderBy(sql`cv.waiting_since asc nulls last`).orderBy('cv.created_at').orderBy('cv.id')
      : query.orderBy('cv.last_activity_at', 'desc').orderBy('cv.id', 'desc');
  if (filter.status !== undefined && filter.status.length > 0)
    query = query.where('cv.status', 'in', filter.status as ConversationStatus[]);
  if (filter.assignee === 'unassigned') query = query.where('cv.assignee_type', 'is', null);
  else if (filter.assignee === 'ai') query = query.where('cv.assignee_type', '=', 'ai');
  else if (filter.assignee !== undefined) query = query.where('cv.assignee_user_id', '=', filter.assignee);
  if (filter.team_id !== undefined) query = query.where('cv.team_id', '=', filter.team_id);
  if (filter.priority !== undefined) query = query.where('cv.priority', '=', filter.priority as Priority);
  // decisions §19: `label` ignores case (the labels' lower-case copy, written with them).
  if (filter.label !== undefined) {
    query = query.where(sql<boolean>`cv.label_keys @> array[${filter.label.toLowerCase()}]::text[]`);
  }
  if (filter.contact_id !== undefined) query = query.where('cv.contact_id', '=', filter.contact_id);
  if (filter.channel_id !== undefined) query = query.where('cv.channel_id', '=', filter.channel_id);
  if (filter.unread !== undefined) query = query.where('cv.unread_count', filter.unread ? '>' : '=', 0);
  if (filter.window !== undefined) {
    const opensAfter = new Date(filter.window.now.getTime() - WINDOW_MS);
    query = filter.window.open
      ? query.where('cv.last_inbound_at', '>', opensAfter)
      : query.where((eb) => eb.or([eb('cv.last_inbound_at', 'is', null), eb('cv.last_inbound_at', '<=', opensAfter)]));
  }
  if (after?.sort === 'last_activity_at') {
    query = query.where((eb) => eb(eb.refTuple('cv.last_activity_at', 'cv.id'), '<', eb.tuple(after.at, after.id)));
  } else if (after?.sort === 'waiting_since') {
    const later = sql<boolean>`(cv.created_at, cv.id) > (${after.created}, ${after.id})`;
    query = query.where(
      after.waiting === null
        ? sql<boolean>`cv.waiting_since is null and ${later}`
        : sql<boolean>`(cv.waiting_since > ${after.waiting} or cv.waiting_since is null
            or (cv.waiting_since = ${after.waiting} and ${later}))`,
    );
  }
  return query.execute();
}

export const findConversation = (db: Kysely<DB>, orgId: string, conversationId: string) =>
  selectConversations(db, orgId).where('cv.id', '=', conversationId).executeTakeFirst();

export function listMessages(db: Kysely<DB>, orgId: string, conversationId: string, limit: number, after?: Position) {
  let query = db
    .selectFrom('messages')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('conversation_id', '=', conversationId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit);
  if (after) query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after[0], after[1])));
  return query.execute();
}

/** One conversation per contact and number; concurrent first messages meet on the unique index. */
export async function findOrCreateConversation(
  db: Kysely<DB>,
  orgId: string,
  contactId: string,
  channelId: string,
  at: Date,
): Promise<string> {
  const find = () =>
    db
      .selectFrom('conversations')
      .select('id')
      .where('org_id', '=', orgId)
      .where('contact_id', '=', contactId)
      .where('channel_id', '=', channelId)
      .executeTakeFirst();
  const existing = await find();
  if (existing) return existing.id;
  const inserted = await db
    .insertInto('conversations')
    .values({
      org_id: orgId,
      id: newId('conv'),
      contact_id: contactId,
      channel_id: channelId,
      last_message_at: at,
      last_activity_at: at,
      created_at: at,
      updated_at: at,
    })
    .onConflict((conflict) => conflict.columns(['org_id', 'contact_id', 'channel_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted) return inserted.id;
  const winner = await find();
  if (!winner) throw new Error('conversation insert conflicted but none exists');
  return winner.id;
}

/**
 * Stores a message once per platform id; answers whether it was new. Moves the conversation's clock forward; an
 * inbound message also moves its window (decisions §15) and counts as unread, in the same update of the
 * conversation's row, so that concurrent inbound messages and read calls serialize on its lock.
 */
export async function insertMessage(db: Kysely<DB>, row: Insertable<MessagesTable>): Promise<boolean> {
  const inserted = await db
    .insertInto('messages')
    .values(row)
    .onConflict((conflict) =>
      conflict.columns(['org_id', 'platform_message_id']).where('platform_message_id', 'is not', null).doNothing(),
    )
    .returning('id')
    .executeTakeFirst();
  if (!inserted) return false;
  const at = row.created_at as Date;
  const inbound = row.direction === 'inbound';
  const reply = row.sender === 'agent' || row.sender === 'ai';
  await db
    .updateTable('conversations')
    .set({
      last_message_at: sql<Date>`greatest(last_message_at, ${at})`,
      last_activity_at: sql<Date>`greatest(last_activity_at, ${at})`,
      updated_at: at,
      ...(inbound
        ? {
            last_inbound_at: sql<Date>`greatest(last_inbound_at, ${at})`,
            unread_count: sql<number>`unread_count + 1`,
            // decisions §19: the oldest contact message not yet answered.
            waiting_since: sql<Date>`coalesce(waiting_since, ${at})`,
          }
        : // decisions §19: an `agent`, `ai` or `system` message answers the wait; the first `agent` or `ai` one is
          // the first reply.
          { waiting_since: null, ...(reply ? { first_reply_at: sql<Date>`coalesce(first_reply_at, ${at})` } : {}) }),
    })
    .where('org_id', '=', row.org_id)
    .where('id', '=', row.conversation_id)
    .execute();
  return true;
}

/**
 * decisions §15: a read call zeroes the unread count (the conversation's row lock orders it against inbound
 * messages). Answers the conversation and, when there was something unread, the newest inbound message (for the
 * platform's read receipt); undefined for an unknown conversation. A second call changes nothing.
 */
export async function markRead(db: Kysely<DB>, orgId: string, conversationId: string, at: Date) {
  const before = await db
    .selectFrom('conversations')
    .select('unread_count')
    .where('org_id', '=', orgId)
    .where('id', '=', conversationId)
    .forUpdate()
    .executeTakeFirst();
  if (!before) return undefined;
  if (before.unread_count === 0) {
    return { conversation: (await findConversation(db, orgId, conversationId)) as ConversationRow, newest: undefined };
  }
  await db
    .updateTable('conversations')
    .set({ unread_count: 0, updated_at: at })
    .where('org_id', '=', orgId)
    .where('id', '=', conversationId)
    .execute();
  const conversation = (await findConversation(db, orgId, conversationId)) as ConversationRow;
  const newest = await db
    .selectFrom('messages')
    .innerJoin('channels', (join) =>
      join.onRef('channels.org_id', '=', 'messages.org_id').onRef('channels.id', '=', 'messages.channel_id'),
    )
    .select(['messages.platform_message_id', 'channels.phone_number_id'])
    .where('messages.org_id', '=', orgId)
    .where('messages.conversation_id', '=', conversationId)
    .where('messages.direction', '=', 'inbound')
    .orderBy('messages.created_at', 'desc')
    .orderBy('messages.id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return { conversation, newest };
}

/** One accepted outbound template message, as the fan-out records it (decisions §7: `sender: "system"`). */
export interface OutboundMessage {
  contactId: string;
  channelId: string;
  templateId: string;
  phone: string;
  platformMessageId: string;
  /** The template's body as sent (D240); null where it is not known (a report that came before the answer). */
  text: string | null;
  /** Where the recipient stands now: a status report may have moved it on before the hand-off's answer came. */
  status: string;
  deliveredAt: Date | null;
  readAt: Date | null;
}

/**
 * Writes a batch of accepted hand-offs into their contacts' conversations, in one statement: it opens (or moves the
 * clock of) every conversation and inserts every message. Messages are stored once per platform id.
 */
export async function recordOutboundMessages(db: Kysely<DB>, orgId: string, messages: OutboundMessage[], at: Date) {
  const ctes = outboundMessagesCtes(orgId, messages, at);
  if (ctes) await sql`with ${ctes} select 1`.execute(db);
}

/**
 * recordOutboundMessages as two data-modifying CTEs (`conv`, then `msgs`, separated by a comma) for a caller that
 * writes them within a larger statement (the fan-out records a group's answers in one); null when there are none.
 */
export function outboundMessagesCtes(orgId: string, messages: OutboundMessage[], at: Date): RawBuilder<unknown> | null {
  if (messages.length === 0) return null;
  const pairs = [
    ...new Map(messages.map((message) => [`${message.contactId} ${message.channelId}`, message])).values(),
  ];
  return sql`
    conv as (
      insert into conversations as c (org_id, id, contact_id, channel_id, last_message_at, last_activity_at,
        created_at, updated_at)
      select ${orgId}, p.id, p.contact_id, p.channel_id, ${at}::timestamptz, ${at}::timestamptz, ${at}::timestamptz,
        ${at}::timestamptz
      from unnest(${pairs.map(() => newId('conv'))}::text[], ${pairs.map((m) => m.contactId)}::text[],
        ${pairs.map((m) => m.channelId)}::text[]) as p(id, contact_id, channel_id)
      on conflict (org_id, contact_id, channel_id) do update set
        last_message_at = greatest(c.last_message_at, excluded.last_message_at),
        last_activity_at = greatest(c.last_activity_at, excluded.last_activity_at), updated_at = excluded.updated_at,
        waiting_since = null -- decisions §19: a system message answers the wait
      returning c.id, c.contact_id, c.channel_id
    ),
    msgs as (
      insert into messages (org_id, id, conversation_id, contact_id, channel_id, direction, sender, type, text,
        template_id, phone, platform_message_id, status, sent_at, delivered_at, read_at, error, created_at, updated_at)
      select ${orgId}, m.id, conv.id, m.contact_id, m.channel_id, 'outbound', 'system', 'template', m.text,
        m.template_id, m.phone, m.platform_message_id, m.status, ${at}::timestamptz, m.delivered_at, m.read_at, null,
        ${at}::timestamptz, ${at}::timestamptz
      from unnest(${messages.map(() => newId('msg'))}::text[], ${messages.map((m) => m.contactId)}::text[],
        ${messages.map((m) => m.channelId)}::text[], ${messages.map((m) => m.templateId)}::text[],
        ${messages.map((m) => m.phone)}::text[], ${messages.map((m) => m.platformMessageId)}::text[],
        ${messages.map((m) => (m.status === 'sending' ? 'sent' : m.status))}::text[],
        ${messages.map((m) => m.deliveredAt)}::timestamptz[], ${messages.map((m) => m.readAt)}::timestamptz[],
        ${messages.map((m) => m.text)}::text[])
        as m(id, contact_id, channel_id, template_id, phone, platform_message_id, status, delivered_at, read_at, text)
      join conv on conv.contact_id = m.contact_id and conv.channel_id = m.channel_id
      on conflict (org_id, platform_message_id) where platform_message_id is not null do nothing
      returning 1
    )`;
}

/** The message a status webhook names, locked until the webhook's transaction ends. */
const REPORTED_COLUMNS = [
  'id',
  'status',
  'contact_id',
  'delivered_at',
  'sent_at',
  'direction',
  'sender',
  'type',
  'platform_message_id',
  'error',
  'phone',
  'window_account_id',
] as const;

export const lockMessageByPlatformId = (db: Kysely<DB>, orgId: string, platformMessageId: string) =>
  db
    .selectFrom('messages')
    .select(REPORTED_COLUMNS)
    .where('org_id', '=', orgId)
    .where('platform_message_id', '=', platformMessageId)
    .forUpdate()
    .executeTakeFirst();

/** decisions §15: a reply named by our callback reference, whose platform id is not known yet (or is this one). */
export const lockUnnamedMessage = (db: Kysely<DB>, orgId: string, messageId: string, platformMessageId: string) =>
  db
    .selectFrom('messages')
    .select(REPORTED_COLUMNS)
    .where('org_id', '=', orgId)
    .where('id', '=', messageId)
    .where((eb) => eb.or([eb('platform_message_id', 'is', null), eb('platform_message_id', '=', platformMessageId)]))
    .forUpdate()
    .executeTakeFirst();

/** Answers the message as it is after the change. */
export const updateMessage = (
  db: Kysely<DB>,
  orgId: string,
  messageId: string,
  patch: Partial<
    Pick<
      MessageRow,
      | 'status'
      | 'error'
      | 'error_message'
      | 'platform_message_id'
      | 'sent_at'
      | 'delivered_at'
      | 'read_at'
      | 'failed_at'
    >
  > & {
    updated_at: Date;
  },
) =>
  db
    .updateTable('messages')
    .set(patch)
    .where('org_id', '=', orgId)
    .where('id', '=', messageId)
    .returningAll()
    .executeTakeFirst();

/** decisions §15: our id of a conversation's message that the platform names (a reply's `context.id`). */
export async function findMessageIdByPlatformId(
  db: Kysely<DB>,
  orgId: string,
  conversationId: string,
  platformMessageId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('messages')
    .select('id')
    .where('org_id', '=', orgId)
    .where('platform_message_id', '=', platformMessageId)
    .where('conversation_id', '=', conversationId)
    .executeTakeFirst();
  return row?.id;
}

/** decisions §15: what the media endpoint needs of a message: its file, and for inbound files where to ask. */
export const findMessageMedia = (db: Kysely<DB>, orgId: string, conversationId: string, messageId: string) =>
  db
    .selectFrom('messages')
    .innerJoin('channels', (join) =>
      join.onRef('channels.org_id', '=', 'messages.org_id').onRef('channels.id', '=', 'messages.channel_id'),
    )
    .select(['messages.direction', 'messages.media', 'messages.platform_media_id', 'channels.phone_number_id'])
    .where('messages.org_id', '=', orgId)
    .where('messages.conversation_id', '=', conversationId)
    .where('messages.id', '=', messageId)
    .executeTakeFirst();

/** Where an outbound message went (its account, sending number and recipient), by the platform's message id. */
export const findOutboundMessageRoute = (db: Kysely<DB>, platformMessageId: string) =>
  db
    .selectFrom('messages')
    .innerJoin('channels', (join) =>
      join.onRef('channels.org_id', '=', 'messages.org_id').onRef('channels.id', '=', 'messages.channel_id'),
    )
    .innerJoin('messaging_accounts', (join) =>
      join
        .onRef('messaging_accounts.org_id', '=', 'channels.org_id')
        .onRef('messaging_accounts.id', '=', 'channels.account_id'),
    )
    .select(['messaging_accounts.business_account_id', 'channels.phone_number_id', 'messages.phone'])
    .where('messages.platform_message_id', '=', platformMessageId)
    .where('messages.direction', '=', 'outbound')
    .executeTakeFirst();

/** decisions §15: when a phone last wrote to a live number (the sandbox platform's memory of the window). */
export async function lastInboundAtNumber(db: Kysely<DB>, phoneNumberId: string, phone: string) {
  const row = await db
    .selectFrom('channels as ch')
    .innerJoin('conversations as cv', (join) =>
      join.onRef('cv.org_id', '=', 'ch.org_id').onRef('cv.channel_id', '=', 'ch.id'),
    )
    .innerJoin('contacts as ct', (join) =>
      join.onRef('ct.org_id', '=', 'cv.org_id').onRef('ct.id', '=', 'cv.contact_id'),
    )
    .select((eb) => eb.fn.max('cv.last_inbound_at').as('last'))
    .where('ch.phone_number_id', '=', phoneNumberId)
    .where('ch.status', '=', 'live')
    .where('ct.phone', '=', phone)
    .executeTakeFirst();
  return (row?.last as Date | null | undefined) ?? undefined;
}
