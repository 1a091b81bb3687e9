// One owner per table (D335): every table of the schema, as a fresh database's catalog lists it after the migrations,
// has one owner named in docs/architecture.md's owners table (a file, or a folder ending in `/`), and every SQL write
// of it in src/ lives in its owner's files. What is counted: Kysely's `insertInto`/`updateTable`/`deleteFrom`/
// `mergeInto` and raw `insert into`, `update`, `delete from`, `merge into`, `truncate` (CTEs and aliases included),
// outside the migrations and the functions they install (their triggers' and functions' writes are the schema's).
// A second writer that cannot yet move into its owner is an exception below, each with its reason: a new one, or a
// write that leaves its owner, fails; so does an exception no longer used.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';

const root = resolve(import.meta.dirname, '../..');
const src = join(root, 'src');

/** Files whose SQL is part of the schema: migrations install it (a function's body), no code runs it as a write. */
const schemaFiles = [
  'db/migrations/',
  // `webhook_record_events` (webhook_events, webhook_deliveries), installed by migrations 0007/0018/0036 from their
  // frozen copy (db/migrations/webhook-record-events.ts) and by `events/subscription-rule.ts` (D334).
  'modules/events/subscription-rule.ts',
];

/** Second writers today, each a write the owner does not yet hold, with why it has not moved. */
const exceptions: { table: string; writer: string; reason: string }[] = [
  // None today: the last three moved into their owners through ports given by the wiring (D349, D350).
];

/** The tables of `names` that a text writes, once per write found. */
function writtenTables(text: string, names: readonly string[]): string[] {
  const alternatives = names.join('|'); // table names are [a-z_]
  const builder = new RegExp(
    `\\b(?:updateTable|insertInto|deleteFrom|mergeInto|replaceInto)\\(\\s*['"\`](?:public\\.)?(${alternatives})\\b`,
    'g',
  );
  const raw = new RegExp(
    `\\b(?:update(?:\\s+only)?|insert\\s+into|delete\\s+from(?:\\s+only)?|merge\\s+into|truncate(?:\\s+table)?(?:\\s+only)?)\\s+(?:public\\.)?"?(${alternatives})\\b`,
    'gi',
  );
  return [...text.matchAll(builder), ...text.matchAll(raw)].map((match) => match[1] as string);
}

/**
 * The owners table of docs/architecture.md: in each row, the backticked names of the first column that are tables,
 * owned by the first backticked path of the second column (under src/modules/, else src/). Answers the owner of
 * each table as a path under src/ (a folder ends in `/`), and what is wrong with the table itself.
 */
function documentedOwners(tables: ReadonlySet<string>): { owners: Map<string, string>; problems: string[] } {
  const text = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const start = text.indexOf('| What | The one place |');
  const rows = text.slice(start).split('\n').slice(2);
  const owners = new Map<string, string>();
  const problems: string[] = [];
  for (const row of rows) {
    if (!row.startsWith('|')) break;
    const [what = '', place = ''] = row.split(' | ');
    const named = [...what.matchAll(/`([a-z_]+)`/g)].map((match) => match[1] as string).filter((n) => tables.has(n));
    if (named.length === 0) continue;
    const first = /`([^`]+)`/.exec(place)?.[1] ?? '';
    const path = [join('modules', first), first].find((candidate) => existsSync(join(src, candidate)));
    if (path === undefined) {
      problems.push(`${named.join(', ')}: owner \`${first}\` is no file or folder under src/`);
      continue;
    }
    const owner = statSync(join(src, path)).isDirectory() ? `${path.replace(/\/$/, '')}/` : path;
    for (const table of named) {
      if (owners.has(table)) problems.push(`${table} is in two rows`);
      owners.set(table, owner);
    }
  }
  return { owners, problems };
}

function sourceFiles(): string[] {
  return readdirSync(src, { recursive: true, encoding: 'utf8' })
    .map((name) => name.split('\\').join('/'))
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    .filter((name) => !schemaFiles.some((schema) => name.startsWith(schema)));
}

describe('table owners', () => {
  let database: Database;
  let tables: string[];

  beforeAll(async () => {
    database = await openDatabase({ dataDir: 'memory://' });
    await migrateToLatest(database.db);
    const { rows } = await sql<{ name: string }>`select c.relname as name from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition order by 1`.execute(database.db);
    tables = rows.map((row) => row.name);
  }, 240_000);
  afterAll(() => database?.close());

  it('reads writes of every shape', () => {
    const names = ['broadcast_recipients', 'messaging_windows', 'teams', 'team_members', 'idempotency_keys', 'x'];
    const text = [
      "db.updateTable('broadcast_recipients')",
      "trx.insertInto('messaging_windows as w').values({})",
      "db.mergeInto('teams as t').using('x', 'x.id', 't.id')",
      'sql`update only team_members set x = 1`',
      'sql`insert into idempotency_keys as k (a) values (1) on conflict do update set a = 2`',
      'sql`with gone as (delete from broadcast_recipients where true returning 1) select 1`',
      'sql`with counted as (\n  update teams set turns = turns + 1 returning turns)\n  update\n    team_members set x = 1`',
      'sql`merge into messaging_windows w using x on true when matched then update set a = 1`',
      'sql`truncate table x`',
      'sql`insert into public."teams" (a) values (1)`',
      // Not writes: reads, a column of that name, a function, a longer name, a lock.
      "db.selectFrom('broadcast_recipients')",
      'sql`select 1 from teams for update`',
      'sql`update_teams(1)`',
      'sql`update teams_log set a = 1`',
      'sql`insert into x_teams (a) values (1)`',
    ].join('\n');
    expect(writtenTables(text, names).sort()).toEqual([
      'broadcast_recipients',
      'broadcast_recipients',
      'idempotency_keys',
      'messaging_windows',
      'messaging_windows',
      'team_members',
      'team_members',
      'teams',
      'teams',
      'teams',
      'x',
    ]);
  });

  it('docs/architecture.md names one owner for every table of the schema', () => {
    const { owners, problems } = documentedOwners(new Set(tables));
    expect(problems).toEqual([]);
    expect(tables.filter((table) => !owners.has(table))).toEqual([]);
  });

  it('every write of a table is in its owner’s files, or a named exception', () => {
    const { owners } = documentedOwners(new Set(tables));
    const strays: string[] = [];
    const used = new Set<(typeof exceptions)[number]>();
    for (const file of sourceFiles()) {
      for (const table of new Set(writtenTables(readFileSync(join(src, file), 'utf8'), tables))) {
        const owner = owners.get(table);
        if (owner !== undefined && file.startsWith(owner)) continue;
        const exception = exceptions.find((entry) => entry.table === table && file.startsWith(entry.writer));
        if (exception) used.add(exception);
        else strays.push(`${file} writes ${table} (owner: ${owner ?? 'none'})`);
      }
    }
    expect(strays).toEqual([]);
    expect(exceptions.filter((entry) => !used.has(entry)).map((entry) => `${entry.writer} ${entry.table}`)).toEqual([]);
    // None today (D349, D350): a second writer takes a port its table's owner implements, handed in by the wiring.
    expect(exceptions).toHaveLength(0);
  });
});
