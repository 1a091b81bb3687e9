// `node bench/explain.ts 'sort=name&q=x' [page]`: every statement one contact-list request makes on the seeded
// bench organization, each with its EXPLAIN (ANALYZE, BUFFERS), to see where a list row's time goes.
//
//   BENCH_DATABASE_URL, BENCH_CONTACTS, BENCH_QUICK as for bench/run.ts (the organization must be seeded).
import { type CompiledQuery, type Kysely, type KyselyPlugin, sql } from 'kysely';
import { openDatabase } from '../src/db/database.ts';
import type { DB } from '../src/db/schema.ts';
import { log } from './bench-database.ts';
import { listWithoutHttp } from './queries.ts';

const search = process.argv[2] ?? '';
const page = Number(process.argv[3] ?? 1);
const quick = process.env.BENCH_QUICK === '1';
const contacts = Number(process.env.BENCH_CONTACTS ?? (quick ? 50_000 : 1_000_000));
const url = process.env.BENCH_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/crm_bench${quick ? '_quick' : ''}`;

/** A handle on `db` that records every statement it runs (not the subqueries compiled into them). */
function recording(db: Kysely<DB>, statements: CompiledQuery[]): Kysely<DB> {
  const compiled = new Map<unknown, CompiledQuery>();
  const recorder: KyselyPlugin = {
    transformQuery: (args) => {
      compiled.set(args.queryId, db.getExecutor().compileQuery(args.node, args.queryId));
      return args.node;
    },
    transformResult: async (args) => {
      const statement = compiled.get(args.queryId);
      if (statement) statements.push(statement);
      return args.result;
    },
  };
  return db.withPlugin(recorder);
}

async function main(): Promise<void> {
  const database = await openDatabase({ databaseUrl: url, poolSize: 4 });
  const { db } = database;
  const org = await sql<{ id: string }>`select id from organizations where name = ${`bench-${contacts}`}`.execute(db);
  const orgId = org.rows[0]?.id;
  if (!orgId) throw new Error(`bench-${contacts} is not seeded: run npm run bench:contacts first`);
  const cursor = page > 1 ? await listWithoutHttp(db, orgId).cursorAt(search, page, 50) : null;
  const statements: CompiledQuery[] = [];
  const request = cursor ? `${search}&cursor=${cursor}` : search;
  const started = performance.now();
  await listWithoutHttp(recording(db, statements), orgId).service(request);
  log(`${search}, page ${page}: ${statements.length} statements, ${(performance.now() - started).toFixed(1)} ms`);
  for (const statement of statements) {
    const plan = await db.executeQuery<{ 'QUERY PLAN': string }>({
      ...statement,
      sql: `explain (analyze, buffers) ${statement.sql}`,
    });
    process.stdout.write(`\n${statement.sql}\n${JSON.stringify(statement.parameters)}\n`);
    process.stdout.write(`${plan.rows.map((row) => row['QUERY PLAN']).join('\n')}\n`);
  }
  await database.close();
}

main().catch((error) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
