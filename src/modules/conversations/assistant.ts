// decisions §19/§20: whether the AI assistant is enabled for an organization. Until §20 adds the assistant it is
// never enabled (a new organization's assistant is disabled), so `assignee: {type: "ai"}` answers 409 `ai_disabled`.
// §20 replaces this one function.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';

export async function assistantEnabled(_db: Kysely<DB>, _orgId: string): Promise<boolean> {
  return false;
}
