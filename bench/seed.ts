// Seeds one organization with N contacts (and custom property values) straight in SQL, in chunks, so that a
// million rows load in minutes. The organization, its key, properties and stages go through the services.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../src/db/schema.ts';
import { systemClock } from '../src/lib/clock.ts';
import { moveContactsOffStage } from '../src/modules/contacts/contacts.repo.ts';
import { createFunnelStagesService } from '../src/modules/funnel-stages/funnel-stages.service.ts';
import { createOperatorService } from '../src/modules/operator/operator.service.ts';
import { createPropertiesService } from '../src/modules/properties/properties.service.ts';

const FIRST = [
  'maria',
  'jose',
  'ana',
  'juan',
  'luis',
  'carmen',
  'pedro',
  'laura',
  'diego',
  'sofia',
  'pablo',
  'elena',
  'carlos',
  'lucia',
  'miguel',
  'paula',
  'jorge',
  'marta',
  'andres',
  'julia',
  'fernando',
  'isabel',
  'ricardo',
  'rosa',
];
const LAST = [
  'garcia',
  'lopez',
  'martinez',
  'rodriguez',
  'hernandez',
  'gonzalez',
  'perez',
  'sanchez',
  'ramirez',
  'torres',
  'flores',
  'rivera',
  'gomez',
  'diaz',
  'cruz',
  'morales',
  'reyes',
  'gutierrez',
  'ortiz',
  'silva',
  'castro',
];
const CITIES = [
  'Mexico City',
  'Guadalajara',
  'Monterrey',
  'Bogota',
  'Lima',
  'Santiago',
  'Buenos Aires',
  'Madrid',
  'Sao Paulo',
  'Quito',
  'Austin',
  'Miami',
  'Puebla',
  'Cancun',
  'Medellin',
  'Cali',
  'Rosario',
  'Valencia',
];
const COUNTRIES = ['MX', 'US', 'BR', 'AR', 'CO', 'ES', 'PE', 'CL'];
const ORIGINS = ['SOCIAL', 'ADS', 'WEB', 'EVENT', 'REFERRAL', 'OUTBOUND', 'IMPORT', 'MANUAL', 'API', 'OTHER'];

const array = (values: string[]) => sql`array[${sql.join(values)}]::text[]`;

export interface Seeded {
  orgId: string;
  key: string;
  contacts: number;
}

/** An organization named `bench-<n>` is reused when it already holds its n seeded contacts. */
export async function seed(db: Kysely<DB>, count: number, log: (line: string) => void): Promise<Seeded> {
  const name = `bench-${count}`;
  const operator = createOperatorService({ db, clock: systemClock, platform: 'sandbox' });
  const existing = await db.selectFrom('organizations').select('id').where('name', '=', name).executeTakeFirst();
  if (existing) {
    const held = await sql<{
      n: number;
    }>`select count(*)::int as n from contacts where org_id = ${existing.id} and left(id, 8) = 'ct_bench'`.execute(db);
    if (held.rows[0]?.n !== count) throw new Error(`${name} is incomplete; run again with BENCH_FRESH=1`);
    const { key } = await operator.createApiKey(existing.id, { name: 'bench' });
    log(`reusing ${name} (${existing.id})`);
    return { orgId: existing.id, key, contacts: count };
  }
  const org = await operator.createOrganization({ name, plan: 'scale' });
  const { key } = await operator.createApiKey(org.id, { name: 'bench' });
  const properties = createPropertiesService({ db, clock: systemClock });
  const score = await properties.create(org.id, { key: 'score', label: 'Score', kind: 'NUMBER' });
  const tiers = ['bronze', 'silver', 'gold', 'platinum'];
  const tier = await properties.create(org.id, {
    key: 'tier',
    label: 'Tier',
    kind: 'DROPDOWN',
    options: tiers.map((option) => ({ key: option, label: option })),
  });
  const segment = await properties.create(org.id, { key: 'segment', label: 'Segment', kind: 'TEXT' });
  const signup = await properties.create(org.id, { key: 'signup', label: 'Signup', kind: 'DATE' });
  const stages = createFunnelStagesService({ db, clock: systemClock, moveContacts: moveContactsOffStage });
  const stageIds: string[] = [];
  for (const stage of ['New', 'Qualified', 'Proposal', 'Won'])
    stageIds.push((await stages.create(org.id, { name: stage })).id);

  const chunk = 50_000;
  const started = Date.now();
  for (let from = 1; from <= count; from += chunk) {
    const to = Math.min(count, from + chunk - 1);
    await db.transaction().execute(async (trx) => {
      await sql`insert into contacts (org_id, id, first_name, last_name, email, phone, country, city, social_handle,
          origin, messaging_status, funnel_stage_id, owner_id, created_at, updated_at)
        select ${org.id}, 'ct_bench' || lpad(i::text, 9, '0'),
          case when i % 50 = 0 then null else (${array(FIRST)})[1 + (i * 7919) % ${FIRST.length}] end,
          (${array(LAST)})[1 + (i * 104729) % ${LAST.length}],
          'user' || i || '@example' || (i % 97) || '.com',
          '+1' || (2000000000 + i)::text,
          case when i % 10 = 0 then null else (${array(COUNTRIES)})[1 + (i * 31) % ${COUNTRIES.length}] end,
          case when i % 7 = 0 then null else (${array(CITIES)})[1 + (i * 13) % ${CITIES.length}] end,
          case when i % 3 = 0 then 'handle_' || i else null end,
          (${array(ORIGINS)})[1 + (i * 17) % ${ORIGINS.length}],
          'unverified',
          (${array(stageIds)})[1 + i % ${stageIds.length}],
          'owner_' || (i % 25),
          now() - ((i * 7) % 730) * interval '1 day',
          now() - ((i * 7) % 730) * interval '1 day' + (i % 86400) * interval '1 second'
        from generate_series(${from}::bigint, ${to}::bigint) as i`.execute(trx);
      const values = (property: string, where: string, value: string) =>
        sql`insert into contact_property_values (org_id, contact_id, property_id, ${sql.raw(value.split('=')[0] as string)})
          select ${org.id}, 'ct_bench' || lpad(i::text, 9, '0'), ${property}, ${sql.raw(value.split('=')[1] as string)}
          from generate_series(${from}::bigint, ${to}::bigint) as i where ${sql.raw(where)}`.execute(trx);
      await values(score.id, 'true', 'value_number=(i * 37) % 1000');
      await values(tier.id, 'i % 2 = 0', `value_text=(array['bronze','silver','gold','platinum'])[1 + i % 4]`);
      await values(segment.id, 'i % 3 = 0', `value_text='segment ' || (i % 50)`);
      await values(signup.id, 'i % 5 = 0', `value_date=date '2024-01-01' + (i % 900)::int`);
    });
    const rate = Math.round(to / ((Date.now() - started) / 1000));
    log(`seeded ${to.toLocaleString('en')} / ${count.toLocaleString('en')} contacts (${rate}/s)`);
  }
  await sql`vacuum analyze contacts`.execute(db);
  await sql`vacuum analyze contact_property_values`.execute(db);
  return { orgId: org.id, key, contacts: count };
}
