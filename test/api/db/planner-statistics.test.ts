// Plans that must not depend on the statistics a table happens to have (D201, D202, D204). A plan cached while a
// table was known to be empty (analyzed with no rows) read the table whole for the rest of the connection's life as
// it grew: a foreign key's check, a trigger's statement; with no statistics at all, the claim probed a new
// organization's broadcasts by their organization alone. Runs on both engines.
import { CompiledQuery, type KyselyPlugin, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze, analyzeChanged } from '../../../src/db/migrate.ts';
import { broadcastMoves } from '../../../src/modules/broadcasts/broadcasts.repo.ts';
import { claimRecipients } from '../../../src/modules/recipients/recipient-claim.ts';
import { onCitus } from '../../helpers/database.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { phones, recipientsFor, sender } from '../../helpers/sends.ts';

let h: Harness;
let orgId: string;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
  orgId = (await h.createOrg()).org.id;
});
afterAll(() => h.close());

/** The shared buffers an `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` says its statement read. */
function buffersRead(explained: unknown): number {
  const root = (explained as [{ Plan: Record<string, number> }] | undefined)?.[0]?.Plan;
  if (!root) throw new Error('no plan');
  return Number(root['Shared Hit Blocks']) + Number(root['Shared Read Blocks']);
}

const reltuples = async (table: string) =>
  Number(
    (
      await sql<{ n: number }>`select reltuples::float8 as n from pg_class where oid = ${table}::regclass`.execute(
        h.database.db,
      )
    ).rows[0]?.n,
  );

describe('statistics (D202)', () => {
  it('are gathered for the tables that hold rows, and an empty table stays never analyzed', async () => {
    // Migrations ran on an empty database: nothing was analyzed empty.
    expect(await reltuples('conversations')).toBe(-1);
    await analyze(h.database.db);
    // On Citus the rows and their statistics are in the workers' shards; the coordinator's catalog holds none.
    if (onCitus) return;
    expect(await reltuples('organizations')).toBeGreaterThanOrEqual(1);
    expect(await reltuples('conversations')).toBe(-1);
    expect(await reltuples('contact_sort_versions')).toBe(-1);
  });
});

// The rest are plans and buffers of one PostgreSQL's planner. On Citus each shard's statement is planned on its
// worker, and the coordinator's EXPLAIN shows one task of it: not what these measure (D347).
describe.skipIf(onCitus)("a contact's sort-version trigger (D201)", () => {
  it('plans its statements at each call, not once for the connection while its table was small', async () => {
    await sql`insert into contacts (org_id, id, first_name, messaging_status)
      select ${orgId}, 'ct_plan' || i, 'c' || i, 'unavailable' from generate_series(1, 30) as i`.execute(h.database.db);
    const buffers = await h.database.db.transaction().execute(async (trx) => {
      // Known to be empty, as an ANALYZE of an empty table leaves it: a plan made now would scan it.
      await sql`analyze contact_sort_versions`.execute(trx);
      // More than five calls in one session: PostgreSQL's plan cache settles on a generic plan after five.
      for (let i = 1; i <= 8; i++) {
        await sql`update contacts set updated_at = now() + ${i} * interval '1 second'
          where org_id = ${orgId} and id = ${`ct_plan${i}`}`.execute(trx);
      }
      // The table grows well past what that plan was made for (versions of other contacts, kept 24 hours).
      await sql`insert into contact_sort_versions (org_id, contact_id, version, replaced, replaced_at,
          updated_at, name_sort, origin)
        select ${orgId}, 'ct_other' || i, 1, 2, now(), now(), 'x', 'API'
        from generate_series(1, 20000) as i`.execute(trx);
      const plan = await sql<{ 'QUERY PLAN': string }>`explain (analyze, buffers, format json)
        update contacts set updated_at = now() + interval '1 minute' where org_id = ${orgId} and id = 'ct_plan20'`.execute(
        trx,
      );
      return buffersRead(plan.rows[0]?.['QUERY PLAN']);
    });
    // Probes by the versions' key read a handful of pages; the scan of 20,000 versions read well over a hundred.
    expect(buffers).toBeLessThan(60);
  });
});

/** The claim's own planner settings (claimBatch): no sort, no sequential scan. */
const CLAIM_SETTINGS = "select set_config('enable_sort', 'off', true), set_config('enable_seqscan', 'off', true)";

/** The rows of `explain <options> <statement>` under the claim's settings, in a transaction rolled back. */
async function explained(statement: CompiledQuery, options: string): Promise<unknown[]> {
  let rows: unknown[] = [];
  await h.database.db
    .transaction()
    .execute(async (trx) => {
      await sql.raw(CLAIM_SETTINGS).execute(trx);
      const plan = await trx.executeQuery<{ 'QUERY PLAN': unknown }>(
        CompiledQuery.raw(`explain ${options} ${statement.sql}`, [...statement.parameters]),
      );
      rows = plan.rows.map((row) => row['QUERY PLAN']);
      throw new Error('rollback');
    })
    .catch((error: Error) => {
      if (error.message !== 'rollback') throw error;
    });
  return rows;
}

/** Buffers an EXPLAIN (ANALYZE, BUFFERS) of `statement` read. */
const buffersOf = async (statement: CompiledQuery) =>
  buffersRead((await explained(statement, '(analyze, buffers, format json)'))[0]);

/** The plan PostgreSQL picks for `statement`, as text. */
const planOf = async (statement: CompiledQuery) => (await explained(statement, '')).join('\n');

describe.skipIf(onCitus)('the fan-out claim (D204)', () => {
  it("finds each row's broadcast by its whole key, however many broadcasts the organization has", async () => {
    const { org, key, template } = await sender(h, { balance: 100_000, limit: 100_000 });
    const send = () =>
      h.api('POST', `/v1/templates/${template.id}/send`, { key, body: { recipients: recipientsFor(phones(100)) } });
    const sent = await send();
    expect(sent.status).toBe(202);
    for (let i = 0; i < 19; i++) expect((await send()).status).toBe(202);
    // 300 more live broadcasts of the organization (copies of the first one's row, without recipients).
    await sql`insert into broadcasts
      select (jsonb_populate_record(b, jsonb_build_object('id', 'bc_other' || i, 'idempotency_key', null))).*
      from broadcasts b, generate_series(1, 300) as i where b.org_id = ${org.id} and b.id = ${sent.body.id}`.execute(
      h.database.db,
    );
    // The claim's statements as it runs them; then its rows are queued again, to explain the same claim.
    const statements: CompiledQuery[] = [];
    const compiled = new Map<unknown, CompiledQuery>();
    const recorder: KyselyPlugin = {
      transformQuery: (args) => {
        compiled.set(args.queryId, h.database.db.getExecutor().compileQuery(args.node, args.queryId));
        return args.node;
      },
      transformResult: async (args) => {
        const statement = compiled.get(args.queryId);
        if (statement) statements.push(statement);
        return args.result;
      },
    };
    const claimed = await claimRecipients(h.database.db.withPlugin(recorder), {
      moves: broadcastMoves,
      limit: 10,
      leaseMs: 60_000,
      token: 'plan-test',
      perNumberPerSecond: null,
    });
    expect(claimed).toHaveLength(10);
    const claim = statements.find(
      (s) => /skip locked/.test(s.sql) && /"r"\."status" = \$\d+/.test(s.sql) && s.parameters.includes('queued'),
    );
    expect(claim).toBeDefined();
    await sql`update broadcast_recipients set status = 'queued', lease_until = null, lease_token = null, charged = 0
      where org_id = ${org.id} and broadcast_id = ${sent.body.id}`.execute(h.database.db);
    const buffers = await buffersOf(claim as CompiledQuery);
    // By the whole key: a few pages per row (93). By the organization alone: its 320 broadcasts for each row (743).
    expect(buffers).toBeLessThan(300);
    // D208: and by the primary keys of broadcasts and channels, not by an index that shares their leading column (the
    // listing index of broadcasts read the organization's 320 for each row: 10 pages a row, 30 ms a claim of 64).
    const plan = await planOf(claim as CompiledQuery);
    expect(plan).toContain('broadcasts_pk');
    expect(plan).not.toContain('broadcasts_list_idx');
    expect(plan).not.toContain('channels_account_idx');
  });
});

describe.skipIf(onCitus)('lookups by primary key (D208)', () => {
  it('take the primary key with no statistics, and the broadcasts list keeps its index', async () => {
    const { org, key, template } = await sender(h, { balance: 100 });
    const sent = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: recipientsFor(phones(1)) },
    });
    expect(sent.status).toBe(202);
    await sql`insert into broadcasts
      select (jsonb_populate_record(b, jsonb_build_object('id', 'bc_lookup' || i, 'idempotency_key', null,
        'created_at', now() - i * interval '1 minute'))).*
      from broadcasts b, generate_series(1, 300) as i where b.org_id = ${org.id} and b.id = ${sent.body.id}`.execute(
      h.database.db,
    );
    // With no statistics for the organization (never analyzed since), by constants as an API read names them.
    const byKey = await planOf(
      CompiledQuery.raw('select template_id from broadcasts where org_id = $1 and id = $2', [org.id, 'bc_lookup7']),
    );
    expect(byKey).toContain('broadcasts_pk');
    const list = await planOf(
      h.database.db
        .selectFrom('broadcasts')
        .select('id')
        .where('org_id', '=', org.id)
        .where('created_at', '>', sql<Date>`'-infinity'::timestamptz`)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(20)
        .compile(),
    );
    expect(list).toContain('broadcasts_list_idx');
  });
});

// PostgreSQL only: PGlite sends no statement names (no generic plans), and its PostgreSQL 17 without statistics still
// costs a scan of the organization's range of the listing index like the key (it is right once ANALYZE has run).
describe.skipIf(process.env.TEST_DB !== 'postgres' || onCitus)('recipients joined back by their key (D211)', () => {
  it('take the primary key in a generic plan, before and after statistics', async () => {
    const { key, template } = await sender(h, { balance: 100_000, limit: 100_000 });
    for (let i = 0; i < 3; i++) {
      const sent = await h.api('POST', `/v1/templates/${template.id}/send`, {
        key,
        body: { recipients: recipientsFor(phones(100)) },
      });
      expect(sent.status).toBe(202);
    }
    const statement = `update broadcast_recipients r set updated_at = now()
      from unnest($1::text[], $2::text[], $3::int[]) as v(org_id, broadcast_id, position)
      where r.org_id = v.org_id and r.broadcast_id = v.broadcast_id and r.position = v.position`;
    for (const analyzed of [false, true]) {
      if (analyzed) await analyze(h.database.db);
      const plan = await h.database.db.transaction().execute(async (trx) => {
        // As the table grows past a hash join's worth: a nested loop, whose inner index is the question.
        await sql`select set_config('plan_cache_mode', 'force_generic_plan', true),
          set_config('enable_seqscan', 'off', true), set_config('enable_hashjoin', 'off', true),
          set_config('enable_mergejoin', 'off', true)`.execute(trx);
        await sql.raw(`prepare by_key (text[], text[], int[]) as ${statement}`).execute(trx);
        const explained = await sql<{
          'QUERY PLAN': string;
        }>`explain execute by_key(array['o'], array['b'], array[1])`.execute(trx);
        await sql`deallocate by_key`.execute(trx);
        return explained.rows.map((row) => row['QUERY PLAN']).join('\n');
      });
      expect(plan, `analyzed: ${analyzed}: ${plan}`).toContain('broadcast_recipients_pk');
    }
  });
});

describe.skipIf(process.env.TEST_DB === 'postgres')("PGlite's ANALYZE task (D205)", () => {
  const lastAnalyze = async (table: string) =>
    (
      await sql<{
        at: Date | null;
      }>`select last_analyze as at from pg_stat_user_tables where relname = ${table}`.execute(h.database.db)
    ).rows[0]?.at ?? null;

  it("analyzes the tables changed past autovacuum's thresholds, and only those", async () => {
    await analyzeChanged(h.database.db);
    const before = await lastAnalyze('funnel_stages');
    const { org } = await h.createOrg();
    await sql`insert into contacts (org_id, id, first_name, messaging_status)
      select ${org.id}, 'ct_auto' || i, 'c' || i, 'unavailable' from generate_series(1, 5000) as i`.execute(
      h.database.db,
    );
    const contactsBefore = await reltuples('contacts');
    await analyzeChanged(h.database.db);
    expect(await reltuples('contacts')).toBeGreaterThanOrEqual(contactsBefore + 5000);
    expect(await lastAnalyze('contacts')).not.toBeNull();
    // A table that did not change is left as it was.
    expect(await lastAnalyze('funnel_stages')).toEqual(before);
  });
});
