// Funnel stages: derived keys, exactly one initial stage, reorder, delete with stage_in_use / move_to (decisions §6).
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/errors.ts';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound, validationError } from '../../http/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import { keyFromName, keyVariant } from '../../lib/keys.ts';
import { applyMoves } from '../../lib/reorder.ts';
import { checkDistinct } from '../properties/properties.service.ts';
import * as repo from './funnel-stages.repo.ts';
import type { FunnelStage, FunnelStageInput, FunnelStagePatch, FunnelStageReorder } from './funnel-stages.schemas.ts';

export function toStage(row: repo.StageRow): FunnelStage {
  return {
    id: row.id,
    name: row.name,
    key: row.key,
    description: row.description,
    order_idx: row.order_idx,
    is_initial: row.is_initial,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Moves a deleted stage's contacts (their owner's write: contacts/contacts.repo.ts, given by the wiring). */
export type MoveStageContacts = (
  db: Kysely<DB>,
  orgId: string,
  from: string,
  to: string | null,
  now: Date,
) => Promise<void>;

export function createFunnelStagesService(deps: { db: Kysely<DB>; clock: Clock; moveContacts: MoveStageContacts }) {
  const { db, clock } = deps;

  async function duplicateKey(orgId: string, key: string) {
    const existing = await repo.findStageByKey(db, orgId, key);
    return new ApiError(409, { code: 'duplicate_key', key, id: existing?.id ?? null });
  }

  /** Runs a stage write under the organization's stage lock; a taken key becomes a 409. */
  async function write<T>(orgId: string, key: string | undefined, work: (trx: Kysely<DB>) => Promise<T>) {
    try {
      return await db.transaction().execute(async (trx) => {
        await repo.lockStages(trx, orgId);
        return work(trx);
      });
    } catch (error) {
      if (key !== undefined && isUniqueViolation(error, 'funnel_stages_key_uq')) throw await duplicateKey(orgId, key);
      throw error;
    }
  }

  return {
    async list(orgId: string) {
      return { items: (await repo.listStages(db, orgId)).map(toStage) };
    },

    async get(orgId: string, id: string) {
      const row = await repo.findStage(db, orgId, id);
      if (!row) throw notFound();
      return toStage(row);
    },

    async create(orgId: string, input: FunnelStageInput) {
      return write(orgId, input.key, async (trx) => {
        let key = input.key;
        if (key === undefined) {
          // A derived key never collides: it takes the first free `base`, `base_2`, `base_3`, ...
          const base = keyFromName(input.name);
          const taken = await repo.keysLike(trx, orgId, base);
          let n = 1;
          while (taken.has(keyVariant(base, n))) n++;
          key = keyVariant(base, n);
        }
        const now = clock.now();
        // contract (decisions §6): the first stage created is the initial one.
        const isInitial = (await repo.findInitialStage(trx, orgId)) === undefined;
        const row = await repo.insertStage(trx, {
          org_id: orgId,
          id: newId('stage'),
          name: input.name,
          key,
          description: input.description ?? '',
          is_initial: isInitial,
          created_at: now,
          updated_at: now,
        });
        return toStage(row);
      });
    },

    async update(orgId: string, id: string, patch: FunnelStagePatch) {
      return write(orgId, patch.key, async (trx) => {
        const current = await repo.findStage(trx, orgId, id);
        if (!current) throw notFound();
        if (patch.is_initial === false && current.is_initial) {
          // contract: exactly one stage stays initial; the flag moves by setting it on another stage.
          throw validationError(
            ['body', 'is_initial'],
            'The initial stage cannot be unset; set is_initial on another stage instead',
            'value_error',
            { input: false },
          );
        }
        const now = clock.now();
        if (patch.is_initial === true && !current.is_initial) await repo.clearInitial(trx, orgId, now);
        const row = await repo.updateStage(trx, orgId, id, {
          ...(patch.name !== undefined ? { name: patch.name } : {}),
          ...(patch.description !== undefined ? { description: patch.description } : {}),
          ...(patch.key !== undefined ? { key: patch.key } : {}),
          ...(patch.is_initial === true ? { is_initial: true } : {}),
          updated_at: now,
        });
        if (!row) throw notFound();
        return toStage(row);
      });
    },

    async reorder(orgId: string, input: FunnelStageReorder) {
      const moves = input.items.map((item) => ({ id: item.stage_id, order_idx: item.order_idx }));
      checkDistinct(
        moves.map((move) => move.id),
        'stage_id',
      );
      return write(orgId, undefined, async (trx) => {
        const current = (await repo.listStages(trx, orgId)).map((row) => row.id);
        const known = new Set(current);
        const missing = moves.map((move) => move.id).filter((moveId) => !known.has(moveId));
        if (missing.length > 0) {
          throw new ApiError(422, {
            code: 'unknown_ids',
            reason: 'Some stage ids are not funnel stages of this organization',
            missing_ids: missing,
            stages: current,
          });
        }
        await repo.writeOrder(trx, orgId, applyMoves(current, moves), clock.now());
        return { items: (await repo.listStages(trx, orgId)).map(toStage) };
      });
    },

    async remove(orgId: string, id: string, moveTo: string | undefined) {
      try {
        await write(orgId, undefined, async (trx) => {
          const stage = await repo.findStage(trx, orgId, id);
          if (!stage) throw notFound();
          const target = moveTo === undefined ? undefined : await repo.findStage(trx, orgId, moveTo);
          if (moveTo !== undefined && (!target || target.id === id)) {
            throw validationError(
              ['query', 'move_to'],
              target ? 'A stage cannot receive its own contacts' : 'Not a funnel stage of this organization',
              'value_error',
              { input: moveTo },
            );
          }
          const now = clock.now();
          if (!target) {
            const count = await repo.countLiveContacts(trx, orgId, id);
            if (count > 0) throw stageInUse(id, count);
          }
          await deps.moveContacts(trx, orgId, id, target?.id ?? null, now);
          await repo.deleteStage(trx, orgId, id);
          if (stage.is_initial) {
            // Exactly one stays initial: the flag passes to the receiving stage, else to the first remaining one.
            const heir = target ?? (await repo.listStages(trx, orgId))[0];
            if (heir) await repo.updateStage(trx, orgId, heir.id, { is_initial: true, updated_at: now });
          }
        });
      } catch (error) {
        // A contact placed in the stage after the count: the foreign key refuses the delete.
        if ((error as { code?: string }).code === '23503') {
          throw stageInUse(id, await repo.countLiveContacts(db, orgId, id));
        }
        throw error;
      }
    },
  };
}

function stageInUse(id: string, count: number) {
  return new ApiError(409, {
    code: 'stage_in_use',
    reason: `${count} contact(s) are in this stage; pass move_to=<stage_id> to move them first`,
    stages: [id],
    contact_count: count,
  });
}

export type FunnelStagesService = ReturnType<typeof createFunnelStagesService>;
