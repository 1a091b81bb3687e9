import { type Kysely, sql } from 'kysely';

// Stable failure codes (D134): `error` holds only a code (`platform_error`, `not_on_network`, …) and the
// platform's own words move to `error_message` (added by 0015). Rows written before kept "code: words" or, for a
// generic platform failure, the words alone: split them so that a retry's `error_codes` can match every failure.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['broadcast_recipients', 'messages']) {
    await sql`update ${sql.table(table)}
      set error = substring(error from '^([a-z_]+): '),
        error_message = coalesce(error_message, substring(error from '^[a-z_]+: (.*)$'))
      where error ~ '^[a-z_]+: '`.execute(db);
    await sql`update ${sql.table(table)}
      set error_message = coalesce(error_message, error), error = 'platform_error'
      where error is not null and error !~ '^[a-z_]+$'`.execute(db);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function down(_db: Kysely<any>): Promise<void> {
  // The split is kept: a code and its words are each where the newer code reads them.
}
