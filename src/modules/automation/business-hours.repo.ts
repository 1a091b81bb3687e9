// SQL of business hours (decisions §20): one row per organization, absent until first saved.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { BusinessHoursView } from './business-hours.schemas.ts';

export const findBusinessHours = (db: Kysely<DB>, orgId: string) =>
  db
    .selectFrom('business_hours')
    .select(['enabled', 'week', 'away_message'])
    .where('org_id', '=', orgId)
    .executeTakeFirst();

export async function saveBusinessHours(db: Kysely<DB>, orgId: string, hours: BusinessHoursView, at: Date) {
  const values = {
    enabled: hours.enabled,
    week: JSON.stringify(hours.week),
    away_message: JSON.stringify(hours.away_message),
    updated_at: at,
  };
  await db
    .insertInto('business_hours')
    .values({ org_id: orgId, ...values })
    .onConflict((conflict) => conflict.column('org_id').doUpdateSet(values))
    .execute();
}

/** The organization's timezone (business hours are in it). */
export const organizationTimezone = async (db: Kysely<DB>, orgId: string): Promise<string> =>
  (await db.selectFrom('organizations').select('timezone').where('id', '=', orgId).executeTakeFirstOrThrow()).timezone;
