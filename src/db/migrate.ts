// One set of migrations for PGlite and PostgreSQL, run at start and by `crm migrate`.
import { type Kysely, sql } from 'kysely';
import { type Migration, type MigrationResultSet, Migrator } from 'kysely/migration';
import { hasCitus } from './citus.ts';
import * as foundation from './migrations/0001-foundation.ts';
import * as contacts from './migrations/0002-contacts.ts';
import * as crm from './migrations/0003-crm.ts';
import * as messaging from './migrations/0004-messaging.ts';
import * as broadcasts from './migrations/0005-broadcasts.ts';
import * as contactList from './migrations/0006-contact-list.ts';
import * as webhooks from './migrations/0007-webhooks.ts';
import * as broadcastFinished from './migrations/0008-broadcast-finished.ts';
import * as messagingWindow from './migrations/0009-messaging-window.ts';
import * as campaign from './migrations/0010-campaign.ts';
import * as claimOrder from './migrations/0011-claim-order.ts';
import * as contactCounts from './migrations/0013-contact-counts.ts';
import * as audienceBroadcasts from './migrations/0014-audience-broadcasts.ts';
import * as replies from './migrations/0015-replies.ts';
import * as apiKeyScopes from './migrations/0016-api-key-scopes.ts';
import * as consoleUsers from './migrations/0017-console-users.ts';
import * as deliveryLanes from './migrations/0018-delivery-lanes.ts';
import * as replyWindow from './migrations/0019-reply-window.ts';
import * as failureCodes from './migrations/0023-failure-codes.ts';
import * as lateReports from './migrations/0025-late-reports.ts';
import * as retention from './migrations/0026-retention.ts';
import * as audienceSnapshotOrder from './migrations/0027-audience-snapshot-order.ts';
import * as recipientInsertCost from './migrations/0028-recipient-insert-cost.ts';
import * as sortVersionPlans from './migrations/0029-sort-version-plans.ts';
import * as contactReachWrites from './migrations/0030-contact-reach-writes.ts';
import * as keyLookups from './migrations/0031-key-lookups.ts';
import * as recipientRoom from './migrations/0032-recipient-room.ts';
import * as recipientListingOrder from './migrations/0033-recipient-listing-order.ts';
import * as messageKeys from './migrations/0034-message-keys.ts';
import * as recipientValues from './migrations/0035-recipient-values.ts';
import * as deliveryTypeLanes from './migrations/0036-delivery-type-lanes.ts';
import * as teamInbox from './migrations/0037-team-inbox.ts';
import * as conversationFilters from './migrations/0038-conversation-filters.ts';
import * as automation from './migrations/0040-automation.ts';
import * as automationEngine from './migrations/0041-automation-engine.ts';
import * as inboxFinish from './migrations/0042-inbox-finish.ts';
import * as distributionKeys from './migrations/0045-distribution-keys.ts';
import * as claimPerOrganization from './migrations/0046-claim-per-organization.ts';
import * as unfinishedBroadcasts from './migrations/0047-unfinished-broadcasts.ts';
import * as contactSortIndexes from './migrations/0048-contact-sort-indexes.ts';
import type { DB } from './schema.ts';

// Names sort in the order they must run; new migrations are appended here.
export const migrations: Record<string, Migration> = {
  '0001-foundation': foundation,
  '0002-contacts': contacts,
  '0003-crm': crm,
  '0004-messaging': messaging,
  '0005-broadcasts': broadcasts,
  '0006-contact-list': contactList,
  '0007-webhooks': webhooks,
  '0008-broadcast-finished': broadcastFinished,
  '0009-messaging-window': messagingWindow,
  '0010-campaign': campaign,
  '0011-claim-order': claimOrder,
  '0013-contact-counts': contactCounts,
  '0014-audience-broadcasts': audienceBroadcasts,
  '0015-replies': replies,
  '0016-api-key-scopes': apiKeyScopes,
  '0017-console-users': consoleUsers,
  '0018-delivery-lanes': deliveryLanes,
  '0019-reply-window': replyWindow,
  '0023-failure-codes': failureCodes,
  '0026-retention': retention,
  '0027-audience-snapshot-order': audienceSnapshotOrder,
  '0028-recipient-insert-cost': recipientInsertCost,
  '0029-sort-version-plans': sortVersionPlans,
  '0030-contact-reach-writes': contactReachWrites,
  '0031-key-lookups': keyLookups,
  '0032-recipient-room': recipientRoom,
  '0033-recipient-listing-order': recipientListingOrder,
  '0034-message-keys': messageKeys,
  '0035-recipient-values': recipientValues,
  '0036-delivery-type-lanes': deliveryTypeLanes,
  '0025-late-reports': lateReports,
  '0037-team-inbox': teamInbox,
  '0038-conversation-filters': conversationFilters,
  '0040-automation': automation,
  '0041-automation-engine': automationEngine,
  '0042-inbox-finish': inboxFinish,
  '0045-distribution-keys': distributionKeys,
  '0046-claim-per-organization': claimPerOrganization,
  '0047-unfinished-broadcasts': unfinishedBroadcasts,
  '0048-contact-sort-indexes': contactSortIndexes,
};

export async function migrateToLatest(db: Kysely<DB>): Promise<MigrationResultSet> {
  // Unordered: a migration merged later with a lower number still runs on databases that are already ahead.
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    allowUnorderedMigrations: true,
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  // Fresh statistics after schema changes (PGlite has no autovacuum to gather them); none when nothing ran (a
  // restart, or a first start from the pre-migrated image, whose statistics came with it: decisions D161).
  if ((result.results ?? []).length > 0) await analyze(db);
  return result;
}

/**
 * One ANALYZE per table of this schema that `tables` (a query answering their regclass as `t`) selects, in one
 * statement; with `holdingRows`, only those that hold a row.
 */
const analyzeEach = (db: Kysely<DB>, tables: string, holdingRows: boolean) =>
  sql`do $$
    declare
      t regclass;
      holds boolean := true;
    begin
      for t in ${sql.raw(tables)}
      loop
        ${sql.raw(holdingRows ? "execute format('select exists (select 1 from %s)', t) into holds;" : '')}
        if holds then
          execute format('analyze %s', t);
        end if;
      end loop;
    end $$`.execute(db);

/**
 * Gathers planner statistics (PGlite has no autovacuum to do it) for the tables that hold rows (D202). An empty
 * table is left as it is: analyzed empty it would be known to be empty, and a plan cached then (a foreign key's
 * check, a trigger's statement) would read it whole for as long as the connection lives while the table grows. Never
 * analyzed, it is planned by its size on disk.
 */
export async function analyze(db: Kysely<DB>): Promise<void> {
  const tables = `select c.oid::regclass from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p') and not c.relispartition and n.nspname = current_schema() order by c.relname`;
  if (!(await hasCitus(db))) {
    await analyzeEach(db, tables, true);
    return;
  }
  // D348: on Citus each table in statements of its own. In one transaction, a read of a reference table's copy on
  // the coordinator (run locally) forbids the ANALYZE that follows it ("a local execution has accessed a
  // placement in the transaction"), so a migration on a database that holds rows would fail at its end.
  const { rows } = await sql<{ t: string }>`select t::text as t from (${sql.raw(tables)}) as each (t)`.execute(db);
  for (const { t } of rows) {
    const { rows: holds } = await sql<{
      holds: boolean;
    }>`select exists (select 1 from ${sql.table(t)}) as holds`.execute(db);
    if (holds[0]?.holds) await sql`analyze ${sql.table(t)}`.execute(db);
  }
}

/**
 * PGlite's stand-in for autovacuum's ANALYZE (D205): the tables changed by more than 50 rows plus a tenth of what
 * they held at their last ANALYZE (autovacuum's default thresholds), each analyzed again. Run every 30 seconds by the
 * worker, so that the plans cached on the one connection are replaced soon after a table grows (an import, a large
 * send), not up to ten minutes later.
 */
export async function analyzeChanged(db: Kysely<DB>): Promise<void> {
  // The session's own changes reach pg_stat_user_tables at most once a second; flushed now, they count too.
  await sql`select pg_stat_force_next_flush()`.execute(db);
  await analyzeEach(
    db,
    `select s.relid::regclass from pg_stat_user_tables s join pg_class c on c.oid = s.relid
      where s.schemaname = current_schema() and s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)
      order by s.relname`,
    false,
  );
}
