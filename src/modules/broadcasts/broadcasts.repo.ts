// SQL for reading broadcasts with their derived counts, listing recipients, and cancelling.
import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';

// contract: `sent` counts recipients in sent, delivered or read; `failed` those in failed. One statement reads a
// broadcast and its counts, so a read is always a consistent snapshot.
const counts = (eb: ExpressionBuilder<DB, 'broadcasts'>) =>
  eb
    .selectFrom('broadcast_recipients as r')
    .whereRef('r.org_id', '=', 'broadcasts.org_id')
    .whereRef('r.broadcast_id', '=', 'broadcasts.id')
    .select([
      sql<number>`count(*) filter (where r.status in ('sent', 'delivered', 'read'))::int`.as('sent'),
      sql<number>`count(*) filter (where r.status = 'failed')::int`.as('failed'),
    ])
    .as('c');

export function selectBroadcasts(db: Kysely<DB>, orgId: string) {
  return db
    .selectFrom('broadcasts')
    .leftJoinLateral(counts, (join) => join.onTrue())
    .select([
      'broadcasts.id',
      'broadcasts.template_id',
      'broadcasts.template_name',
      'broadcasts.template_language',
      'broadcasts.channel_id',
      'broadcasts.stored_status',
      'broadcasts.requested',
      'broadcasts.origin',
      'broadcasts.created_at',
      sql<number>`coalesce(c.sent, 0)`.as('sent'),
      sql<number>`coalesce(c.failed, 0)`.as('failed'),
    ])
    .where('broadcasts.org_id', '=', orgId);
}

export type BroadcastRow = Awaited<ReturnType<ReturnType<typeof selectBroadcasts>['executeTakeFirstOrThrow']>>;
