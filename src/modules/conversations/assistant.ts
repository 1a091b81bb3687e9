// decisions §19/§20: whether the AI assistant is enabled for an organization (a new organization's is disabled):
// `assignee: {type: "ai"}` is allowed only while it is, else 409 `ai_disabled`. The settings are §20's
// (`PUT /v1/ai-assistant`, modules/automation).
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';

export async function assistantEnabled(db: Kysely<DB>, orgId: string): Promise<boolean> {
  const row = await db.selectFrom('ai_assistants').select('enabled').where('org_id', '=', orgId).executeTakeFirst();
  return row?.enabled ?? false;
}
