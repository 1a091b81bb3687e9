// Sub-origins: an organization's named sources inside an origin category (decisions §1).
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/errors.ts';
import type { DB } from '../../db/schema.ts';
import { ApiError } from '../../http/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import * as repo from './sub-origins.repo.ts';
import type { ContactOrigin, SubOrigin, SubOriginInput } from './sub-origins.schemas.ts';

export function toSubOrigin(row: repo.SubOriginRow): SubOrigin {
  return {
    id: row.id,
    key: row.key,
    label: row.label,
    origin: row.origin as ContactOrigin,
    created_at: row.created_at.toISOString(),
  };
}

export function createSubOriginsService(deps: { db: Kysely<DB>; clock: Clock }) {
  const { db, clock } = deps;
  return {
    async list(orgId: string) {
      return { items: (await repo.listSubOrigins(db, orgId)).map(toSubOrigin) };
    },

    async create(orgId: string, input: SubOriginInput) {
      try {
        const row = await repo.insertSubOrigin(db, {
          org_id: orgId,
          id: newId('so'),
          key: input.key,
          label: input.label,
          origin: input.origin,
          created_at: clock.now(),
        });
        return toSubOrigin(row);
      } catch (error) {
        if (!isUniqueViolation(error, 'sub_origins_key_uq')) throw error;
        const existing = await repo.findSubOriginByKey(db, orgId, input.key);
        throw new ApiError(409, { code: 'duplicate_key', key: input.key, id: existing?.id ?? null });
      }
    },
  };
}

export type SubOriginsService = ReturnType<typeof createSubOriginsService>;
