// SQL of the AI assistant's settings (decisions §20): one row per organization, absent until first saved.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DB } from '../../../db/schema.ts';
import type { AiAssistantsTable } from '../../../db/schema-automation.ts';

export type AssistantRow = Selectable<AiAssistantsTable>;

export const findAssistant = (db: Kysely<DB>, orgId: string) =>
  db.selectFrom('ai_assistants').selectAll().where('org_id', '=', orgId).executeTakeFirst();

export async function saveAssistant(db: Kysely<DB>, row: Insertable<AiAssistantsTable>): Promise<AssistantRow> {
  const { org_id: _orgId, ...changes } = row;
  return db
    .insertInto('ai_assistants')
    .values(row)
    .onConflict((conflict) => conflict.column('org_id').doUpdateSet(changes))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * A provider key sealed again (a key rotation, assistant-settings.ts resealAssistantKeys): applied only while the row
 * holds the text that was read, so a concurrent PUT is never overwritten. Answers whether it applied.
 */
export async function replaceSealedKey(
  db: Kysely<DB>,
  orgId: string,
  previous: string,
  sealed: { provider_api_key: string | null; api_key_key_id: string | null },
): Promise<boolean> {
  const result = await db
    .updateTable('ai_assistants')
    .set(sealed)
    .where('org_id', '=', orgId)
    .where('provider_api_key', '=', previous)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Of `ids`, the organization's connected numbers. */
export async function existingChannels(db: Kysely<DB>, orgId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('channels')
    .select('id')
    .where('org_id', '=', orgId)
    .where('id', 'in', ids)
    .execute();
  return new Set(rows.map((row) => row.id));
}

/** The conversation's recent messages, newest first, never a private note (decisions §19: notes never reach it). */
export const recentMessages = (db: Kysely<DB>, orgId: string, conversationId: string, limit: number) =>
  db
    .selectFrom('messages')
    .select(['id', 'direction', 'sender', 'type', 'text', 'media'])
    .where('org_id', '=', orgId)
    .where('conversation_id', '=', conversationId)
    .where('private', '=', false)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();

export const conversationExists = async (db: Kysely<DB>, orgId: string, conversationId: string) =>
  (await db
    .selectFrom('conversations')
    .select('id')
    .where('org_id', '=', orgId)
    .where('id', '=', conversationId)
    .executeTakeFirst()) !== undefined;
