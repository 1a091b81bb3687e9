// decisions §19: canned responses: short codes unique (409 duplicate), at most 1,000, found by `q`.
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/errors.ts';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound } from '../../http/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import * as repo from './canned-responses.repo.ts';
import {
  type CannedResponseInput,
  type CannedResponsePatch,
  MAX_CANNED_RESPONSES,
} from './canned-responses.schemas.ts';

/** A taken short code meets the unique index: 409 `{code: "duplicate", field: "short_code"}`. */
async function uniquely<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isUniqueViolation(error, 'canned_responses_short_code_uq')) {
      throw new ApiError(409, { code: 'duplicate', field: 'short_code' });
    }
    throw error;
  }
}

export function createCannedResponsesService(deps: { db: Kysely<DB>; clock: Clock }) {
  const { db, clock } = deps;
  return {
    list: async (orgId: string, q?: string) => ({ items: await repo.listCannedResponses(db, orgId, q) }),

    async get(orgId: string, id: string) {
      const row = await repo.findCannedResponse(db, orgId, id);
      if (!row) throw notFound();
      return row;
    },

    create: (orgId: string, input: CannedResponseInput) =>
      uniquely(() =>
        db.transaction().execute(async (trx) => {
          if ((await repo.countLocked(trx, orgId)) >= MAX_CANNED_RESPONSES) {
            throw new ApiError(422, { code: 'canned_response_limit', limit: MAX_CANNED_RESPONSES });
          }
          return repo.insertCannedResponse(trx, orgId, { id: newId('cr'), ...input, at: clock.now() });
        }),
      ),

    async update(orgId: string, id: string, patch: CannedResponsePatch) {
      const row = await uniquely(() => repo.updateCannedResponse(db, orgId, id, { ...patch, updated_at: clock.now() }));
      if (!row) throw notFound();
      return row;
    },

    async remove(orgId: string, id: string) {
      const deleted = await repo.deleteCannedResponse(db, orgId, id);
      if (Number(deleted.numDeletedRows) === 0) throw notFound();
    },
  };
}

export type CannedResponsesService = ReturnType<typeof createCannedResponsesService>;
