import { type Kysely, sql } from 'kysely';

// D219: an audience broadcast's recipient keeps its own values of the broadcast's named placeholders (`send_values`,
// in the order of the broadcast's `contact_tokens`), not a whole copy of the send components: the components are
// the broadcast's `base_components` with the values put in where their markers are, built by the fan-out when it
// claims the row (and by a retry). A recipient row was 445 bytes, 193 of them the components parsed as JSON per
// row by each chunk; sends, replies' and retries' recipients keep their components as before.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table broadcast_recipients add column send_values text[]`.execute(db);
  await sql`alter table broadcast_recipients alter column send_components drop not null`.execute(db);
  await sql`alter table broadcast_recipients add constraint broadcast_recipients_components_ck
    check (send_components is not null or send_values is not null) not valid`.execute(db);
  await sql`alter table broadcast_recipients validate constraint broadcast_recipients_components_ck`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up.
export async function down(db: Kysely<any>): Promise<void> {
  // The components again, as the chunks built them before: each marker (U+E000 source U+E001) replaced by the value
  // as JSON string content ('' when missing).
  await sql`create function pg_temp.recipient_components(base jsonb, tokens jsonb, vals text[]) returns jsonb
    language plpgsql as $$
    declare
      body text := base::text;
      token jsonb;
      i int := 0;
    begin
      for token in select value from jsonb_array_elements(coalesce(tokens, '[]'::jsonb)) loop
        i := i + 1;
        body := replace(body, chr(57344) || (token ->> 'source') || chr(57345),
          left(substr(to_jsonb(coalesce(vals[i], ''))::text, 2), -1));
      end loop;
      return body::jsonb;
    end $$`.execute(db);
  await sql`update broadcast_recipients r
    set send_components = pg_temp.recipient_components(b.base_components, b.contact_tokens, r.send_values)
    from broadcasts b
    where b.org_id = r.org_id and b.id = r.broadcast_id and r.send_components is null`.execute(db);
  await sql`alter table broadcast_recipients drop constraint broadcast_recipients_components_ck`.execute(db);
  await sql`alter table broadcast_recipients alter column send_components set not null`.execute(db);
  await sql`alter table broadcast_recipients drop column send_values`.execute(db);
}
