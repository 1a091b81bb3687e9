// Distribution by organization on Citus (D316). On a database with the `citus` extension, each migration that
// creates tables ends with `distributeTables`: `organizations` distributed by `id`, every other table with an
// `org_id` column distributed by it and co-located with `organizations`, and the global lookups (`REFERENCE_TABLES`)
// made reference tables. Elsewhere (one PostgreSQL, PGlite) it does nothing.
import { type Kysely, sql } from 'kysely';

/** Tables without an organization that every node holds a copy of: the global lookups (D313). */
export const REFERENCE_TABLES = ['directory'];

/** Tables kept on the coordinator alone: bookkeeping and the throttle of sign-ins by email (no organization). */
export const LOCAL_TABLES = ['kysely_migration', 'kysely_migration_lock', 'app_state', 'sign_in_attempts'];

// biome-ignore lint/suspicious/noExplicitAny: migrations call it with their own untyped handle.
type Db = Kysely<any>;

export async function hasCitus(db: Db): Promise<boolean> {
  const { rows } = await sql<{
    on: boolean;
  }>`select exists (select from pg_extension where extname = 'citus') as on`.execute(db);
  return rows[0]?.on === true;
}

/**
 * The schema's tables not yet distributed, each with how it is to be placed, in an order that creates every foreign
 * key's target first.
 */
async function undistributed(db: Db): Promise<{ table: string; kind: 'root' | 'tenant' | 'reference' }[]> {
  const { rows } = await sql<{ table: string; has_org: boolean; targets: string[] | null }>`
    select c.relname as table,
      exists (select from pg_attribute a where a.attrelid = c.oid and a.attname = 'org_id' and not a.attisdropped)
        as has_org,
      (select array_agg(distinct t.relname::text) from pg_constraint f join pg_class t on t.oid = f.confrelid
        where f.conrelid = c.oid and f.contype = 'f' and f.confrelid <> c.oid) as targets
    from pg_class c
    where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p') and not c.relispartition
      and not exists (select from pg_dist_partition p where p.logicalrelid = c.oid)
    order by c.relname`.execute(db);
  const pending = new Map(
    rows
      .filter((row) => !LOCAL_TABLES.includes(row.table))
      .map((row) => {
        const kind = REFERENCE_TABLES.includes(row.table)
          ? ('reference' as const)
          : row.table === 'organizations'
            ? ('root' as const)
            : row.has_org
              ? ('tenant' as const)
              : undefined;
        if (kind === undefined) throw new Error(`table ${row.table} has no org_id and is not a reference table (D316)`);
        return [row.table, { table: row.table, kind, targets: row.targets ?? [] }];
      }),
  );
  const ordered: { table: string; kind: 'root' | 'tenant' | 'reference' }[] = [];
  while (pending.size > 0) {
    const ready = [...pending.values()].filter((entry) => entry.targets.every((target) => !pending.has(target)));
    if (ready.length === 0) throw new Error(`foreign keys form a cycle among ${[...pending.keys()].join(', ')}`);
    // Co-location names `organizations`: it goes first.
    ready.sort((a, b) => Number(b.kind === 'root') - Number(a.kind === 'root'));
    for (const entry of ready) {
      pending.delete(entry.table);
      ordered.push({ table: entry.table, kind: entry.kind });
    }
  }
  return ordered;
}

/** Distributes (or makes reference tables of) the schema's tables that are still local; nothing without Citus. */
export async function distributeTables(db: Db): Promise<void> {
  if (!(await hasCitus(db))) return;
  // Triggers on distributed tables run on the shard and touch only co-located shards of the same organization.
  await sql`set local citus.enable_unsafe_triggers = on`.execute(db);
  // One connection per node for this transaction's work: it created these tables and distributes them with their
  // foreign keys, which Citus allows only in sequential mode.
  await sql`set local citus.multi_shard_modify_mode = 'sequential'`.execute(db);
  for (const { table, kind } of await undistributed(db)) {
    if (kind === 'reference') await sql`select create_reference_table(${table})`.execute(db);
    else if (kind === 'root') await sql`select create_distributed_table(${table}, 'id')`.execute(db);
    else await sql`select create_distributed_table(${table}, 'org_id', colocate_with => 'organizations')`.execute(db);
  }
}

/** The tables with an organization left local on a Citus database (none after `crm migrate`: D316). */
export async function localTenantTables(db: Db): Promise<string[]> {
  if (!(await hasCitus(db))) return [];
  const { rows } = await sql<{ table: string }>`select c.relname as table from pg_class c
    where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p') and not c.relispartition
      and not exists (select from pg_dist_partition p where p.logicalrelid = c.oid)
      and (c.relname = any(${[...REFERENCE_TABLES, 'organizations']}::text[])
        or exists (select from pg_attribute a where a.attrelid = c.oid and a.attname = 'org_id' and not a.attisdropped))
    order by 1`.execute(db);
  return rows.map((row) => row.table);
}
