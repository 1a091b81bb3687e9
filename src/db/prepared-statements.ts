// Named (prepared) statements on a PostgreSQL server for the hottest read, the workers' polls and the fan-out's steps
// (decisions D22, D207, D209, D211). PostgreSQL plans an unnamed statement on every execution; a named one is parsed
// once per connection and, after a few executions, runs on a cached plan. Statements are marked by their SQL text:
// Kysely still builds and executes them (plugins and the one database handle see them as usual); only the pool's
// client sends them by name.
import type {
  CompiledQuery,
  Kysely,
  PostgresCursor,
  PostgresPool,
  PostgresPoolClient,
  PostgresQueryResult,
  QueryResult,
  RawBuilder,
} from 'kysely';
import type pg from 'pg';
import type { DB } from './schema.ts';

/** SQL text -> statement name. Texts are fixed strings compiled once, so the map stays small. */
const names = new Map<string, string>();

/**
 * At most this many texts go by name: each is parsed, and its plans cached, on every connection that runs it. The
 * marked texts are a fixed set (a few per marked statement: its variants by the kinds of rows present), far below.
 */
const MOST_NAMED = 128;

/** Makes every later execution of exactly this SQL text a named statement (on PostgreSQL; PGlite ignores it). */
function prepareStatement(sql: string): void {
  if (!names.has(sql) && names.size < MOST_NAMED) names.set(sql, `crm_prepared_${names.size + 1}`);
}

/**
 * Runs a compiled statement by name (D207, D209, D211): parsed once per connection, and after five executions on a
 * generic plan when PostgreSQL finds it no dearer than the custom ones, so not planned again. For polls of a queue's
 * own index with a limit, and for statements whose every lookup by key has no index to take but the key (the
 * fan-out's record of a group, its broadcast's lock and end check, the recipients' updates by key). Not for an index
 * that leads like the key it would be costed like: with the values unknown, a generic plan took the recipients' old
 * listing index (org, broadcast, status, position) for their key and read every recipient of the broadcast per row
 * (204 ms a group at 100,000 recipients, D207); nor for a condition whose best plan follows its values (a list of
 * phones: 83 ms for 7).
 */
export function executePrepared<R>(
  db: Kysely<DB>,
  statement: CompiledQuery<R> | RawBuilder<R>,
): Promise<QueryResult<R>> {
  const compiled = 'isRawBuilder' in statement ? statement.compile(db) : statement;
  prepareStatement(compiled.sql);
  return db.executeQuery(compiled);
}

/**
 * An array of strings and numbers as PostgreSQL's array literal, built by one `join` (D217): pg builds it an element
 * at a time, three concatenations each, which were a sixth of a fan-out worker's allocations. Only for elements that
 * need nothing but quotes around them; anything else (a null, a quote, a backslash, a nested array, a Date) is left
 * to pg, whose text for these elements is the same (test/unit/db/array-literal.test.ts).
 */
export function arrayLiteral(values: readonly unknown[]): string | undefined {
  if (values.length === 0) return '{}';
  for (const value of values) {
    if (typeof value === 'number') continue;
    if (typeof value !== 'string' || value.includes('"') || value.includes('\\')) return undefined;
  }
  return `{"${values.join('","')}"}`;
}

const parameterText = (value: unknown): unknown => (Array.isArray(value) ? (arrayLiteral(value) ?? value) : value);

type Command = PostgresQueryResult<unknown>['command'];
// The commands Kysely tells apart (transaction ends, affected rows); any other one reads like a SELECT to it.
const COMMANDS = new Set<string>(['UPDATE', 'DELETE', 'INSERT', 'SELECT', 'MERGE', 'COMMIT', 'ROLLBACK']);
const isCommand = (command: string): command is Command => COMMANDS.has(command);

class PreparingClient implements PostgresPoolClient {
  readonly #client: pg.PoolClient;

  constructor(client: pg.PoolClient) {
    this.#client = client;
  }

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(
    input: string | PostgresCursor<R>,
    parameters: ReadonlyArray<unknown> = [],
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // Kysely passes a cursor only when the dialect is given one (streaming), which this project does not do.
    if (typeof input !== 'string') throw new Error('streaming queries are not configured');
    return this.#run<R>(input, parameters.map(parameterText));
  }

  async #run<R>(text: string, values: unknown[]): Promise<PostgresQueryResult<R>> {
    const name = names.get(text);
    const result = await this.#client.query<R & pg.QueryResultRow>(
      name === undefined ? { text, values } : { name, text, values },
    );
    const { command, rowCount, rows } = result;
    return { command: isCommand(command) ? command : 'SELECT', rowCount: rowCount ?? 0, rows };
  }

  release(destroy?: boolean): void {
    this.#client.release(destroy);
  }
}

/** The pool as Kysely sees it, sending marked statements by name. One wrapper per pooled client. */
export function preparingPool(pool: pg.Pool): PostgresPool {
  const wrappers = new WeakMap<pg.PoolClient, PreparingClient>();
  return {
    options: pool.options,
    async connect() {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = new PreparingClient(client);
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}
