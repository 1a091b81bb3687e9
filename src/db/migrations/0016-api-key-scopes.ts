import { type Kysely, sql } from 'kysely';

// decisions §18: a key's scopes (every operation, `*`, for the keys made before), an optional expiry and the minute
// it was last used (written at most once a minute per key, src/http/key-usage.ts).
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table api_keys
    add column scopes text[] not null default '{*}',
    add column expires_at timestamptz,
    add column last_used_at timestamptz`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table api_keys drop column scopes, drop column expires_at, drop column last_used_at`.execute(db);
}
