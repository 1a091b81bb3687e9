// SQL of the automation engine (decisions §20): what a contact's message is judged by, the per-conversation
// guardrail state, and the assistant's job queue.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../../db/schema.ts';
import { claimFairly } from '../../../lib/fair-claims.ts';
import { newId } from '../../../lib/ids.ts';

/** The inbound message a webhook just stored, and its conversation's state. */
export const findInbound = (db: Kysely<DB>, orgId: string, platformMessageId: string) =>
  db
    .selectFrom('messages as m')
    .innerJoin('conversations as c', (join) =>
      join.onRef('c.org_id', '=', 'm.org_id').onRef('c.id', '=', 'm.conversation_id'),
    )
    .select([
      'm.id',
      'm.conversation_id',
      'm.contact_id',
      'm.channel_id',
      'm.type',
      'm.text',
      'm.direction',
      'c.status',
      'c.assignee_type',
      'c.assignee_user_id',
      'c.team_id',
      'c.labels',
      (eb) =>
        eb
          .exists(
            eb
              .selectFrom('messages as o')
              .select('o.id')
              .whereRef('o.org_id', '=', 'm.org_id')
              .whereRef('o.conversation_id', '=', 'm.conversation_id')
              .whereRef('o.id', '!=', 'm.id'),
          )
          .as('has_earlier'),
    ])
    .where('m.org_id', '=', orgId)
    .where('m.platform_message_id', '=', platformMessageId)
    .executeTakeFirst();

/** The conversation's owner now (the assistant's guardrail reads it again before it sends). */
export const conversationOwner = (db: Kysely<DB>, orgId: string, conversationId: string, lock = false) => {
  const query = db
    .selectFrom('conversations')
    .select(['assignee_type', 'assignee_user_id', 'status', 'channel_id', 'contact_id'])
    .where('org_id', '=', orgId)
    .where('id', '=', conversationId);
  return (lock ? query.forUpdate() : query).executeTakeFirst();
};

export const activeRules = (db: Kysely<DB>, orgId: string, events: string[]) =>
  db
    .selectFrom('automation_rules')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('active', '=', true)
    .where('event', 'in', events)
    .orderBy('position')
    .orderBy('id')
    .execute();

export const findAutomationState = (db: Kysely<DB>, orgId: string, conversationId: string) =>
  db
    .selectFrom('conversation_automation')
    .select(['away_sent_at', 'ai_replies'])
    .where('org_id', '=', orgId)
    .where('conversation_id', '=', conversationId)
    .executeTakeFirst();

export const recordAwayMessage = (db: Kysely<DB>, orgId: string, conversationId: string, at: Date) =>
  db
    .insertInto('conversation_automation')
    .values({ org_id: orgId, conversation_id: conversationId, away_sent_at: at })
    .onConflict((conflict) => conflict.columns(['org_id', 'conversation_id']).doUpdateSet({ away_sent_at: at }))
    .execute();

export const countAssistantMessage = (db: Kysely<DB>, orgId: string, conversationId: string) =>
  db
    .insertInto('conversation_automation')
    .values({ org_id: orgId, conversation_id: conversationId, ai_replies: 1 })
    .onConflict((conflict) =>
      conflict
        .columns(['org_id', 'conversation_id'])
        .doUpdateSet({ ai_replies: sql`conversation_automation.ai_replies + 1` }),
    )
    .execute();

/** The assistant's job for one contact message (once, whatever redelivers it). */
export const queueAssistantJob = (db: Kysely<DB>, orgId: string, conversationId: string, messageId: string, at: Date) =>
  db
    .insertInto('assistant_jobs')
    .values({ org_id: orgId, id: newId('aij'), conversation_id: conversationId, message_id: messageId, created_at: at })
    .onConflict((conflict) => conflict.columns(['org_id', 'message_id']).doNothing())
    .execute();

export interface ClaimedJob {
  org_id: string;
  id: string;
  conversation_id: string;
  message_id: string;
  attempts: number;
  lease_token: string;
}

/**
 * Claims due jobs: each the oldest of its conversation (one model call at a time per conversation, in order), not
 * leased or with an expired lease, skipping rows another worker holds; leases them for `leaseMs`. One organization
 * at a time, an even share each, the longest waiting first (D318).
 */
export async function claimJobs(db: Kysely<DB>, limit: number, leaseMs: number, token: string): Promise<ClaimedJob[]> {
  const orgs = await sql<{ org_id: string }>`select org_id from assistant_jobs
    where lease_until is null or lease_until < now()
    group by org_id order by min(created_at), org_id limit ${limit}`.execute(db);
  return claimFairly(
    orgs.rows.map((row) => row.org_id),
    limit,
    async (orgId, max) =>
      (
        await sql<ClaimedJob>`
    with due as (
      select j.org_id, j.id from assistant_jobs j
      where j.org_id = ${orgId} and (j.lease_until is null or j.lease_until < now())
        and not exists (
          select 1 from assistant_jobs o
          where o.org_id = ${orgId} and o.conversation_id = j.conversation_id
            and (o.created_at, o.id) < (j.created_at, j.id)
        )
      order by j.created_at, j.id
      limit ${max}
      for update skip locked
    )
    update assistant_jobs a
    set lease_until = now() + make_interval(secs => ${leaseMs / 1000}), lease_token = ${token}, attempts = a.attempts + 1
    from due where a.org_id = ${orgId} and a.org_id = due.org_id and a.id = due.id
    returning a.org_id, a.id, a.conversation_id, a.message_id, a.attempts, a.lease_token`.execute(db)
      ).rows,
  );
}

/** Finishes a job, only under its lease's token (a job whose lease passed to another worker is not ours). */
export async function finishJob(db: Kysely<DB>, job: ClaimedJob): Promise<boolean> {
  const result = await db
    .deleteFrom('assistant_jobs')
    .where('org_id', '=', job.org_id)
    .where('id', '=', job.id)
    .where('lease_token', '=', job.lease_token)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export const countPendingJobs = async (db: Kysely<DB>): Promise<number> =>
  Number(
    (
      await db
        .selectFrom('assistant_jobs')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
