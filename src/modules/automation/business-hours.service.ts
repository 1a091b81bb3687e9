// GET/PUT /v1/business-hours (decisions §20): the week's intervals checked (`close` after `open`), stored whole.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { validationError } from '../../http/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import * as repo from './business-hours.repo.ts';
import type { BusinessHoursInput, BusinessHoursView } from './business-hours.schemas.ts';
import { minutesOf } from './business-hours.ts';

/** decisions §20: disabled by default. */
export const DEFAULT_BUSINESS_HOURS: BusinessHoursView = { enabled: false, week: [], away_message: null };

export async function readBusinessHours(db: Kysely<DB>, orgId: string): Promise<BusinessHoursView> {
  const row = await repo.findBusinessHours(db, orgId);
  return row
    ? { enabled: row.enabled, week: row.week as BusinessHoursView['week'], away_message: row.away_message }
    : DEFAULT_BUSINESS_HOURS;
}

export function createBusinessHoursService(deps: { db: Kysely<DB>; clock: Clock }) {
  const { db, clock } = deps;
  return {
    get: (orgId: string) => readBusinessHours(db, orgId),

    async put(orgId: string, input: BusinessHoursInput): Promise<BusinessHoursView> {
      const hours: BusinessHoursView = {
        enabled: input.enabled,
        week: input.week ?? [],
        away_message: input.away_message ?? null,
      };
      hours.week.forEach((interval, index) => {
        if (minutesOf(interval.close) <= minutesOf(interval.open)) {
          throw validationError(['body', 'week', index, 'close'], 'close must be after open', 'value_error', {
            input: interval.close,
          });
        }
      });
      await repo.saveBusinessHours(db, orgId, hours, clock.now());
      return hours;
    },
  };
}

export type BusinessHoursService = ReturnType<typeof createBusinessHoursService>;
