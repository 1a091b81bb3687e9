// decisions §19: teams (names unique ignoring case, at most 100), their members and auto-assignment's settings.
// A change that may give out waiting conversations (auto-assignment switched on, a higher limit, new members)
// gives them out in the same transaction; deleting a team takes its conversations out of it, each with its event.
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/errors.ts';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound, validationError } from '../../http/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import type { ConversationChanges } from '../conversations/conversation-changes.ts';
import * as repo from './teams.repo.ts';
import { MAX_TEAMS, type TeamInput, type TeamPatch } from './teams.schemas.ts';

const duplicateName = () => new ApiError(409, { code: 'duplicate', field: 'name' });

async function checkMembers(trx: Kysely<DB>, orgId: string, memberIds: string[] | undefined) {
  if (memberIds === undefined) return;
  const unknown = await repo.unknownUsers(trx, orgId, memberIds);
  const index = memberIds.findIndex((id) => unknown.has(id));
  if (index >= 0) {
    throw validationError(['body', 'member_ids', index], 'Not a user of the organization', 'value_error', {
      input: memberIds[index],
    });
  }
}

export function createTeamsService(deps: { db: Kysely<DB>; clock: Clock; changes: ConversationChanges }) {
  const { db, clock } = deps;
  const { applyConversationChange, giveOut } = deps.changes;

  /** A team write in one transaction; the name's unique index answers a taken name (409). */
  async function write<T>(work: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
    try {
      return await transactionWithRetry(db, work);
    } catch (error) {
      if (isUniqueViolation(error, 'teams_name_uq')) throw duplicateName();
      throw error;
    }
  }

  async function get(orgId: string, teamId: string) {
    const team = await repo.findTeam(db, orgId, teamId);
    if (!team) throw notFound();
    return team;
  }

  return {
    list: async (orgId: string) => ({ items: await repo.listTeams(db, orgId) }),

    get,

    async create(orgId: string, input: TeamInput) {
      const id = newId('team');
      await write(async (trx) => {
        if ((await repo.countTeamsLocked(trx, orgId)) >= MAX_TEAMS) {
          throw new ApiError(422, { code: 'team_limit', limit: MAX_TEAMS });
        }
        await checkMembers(trx, orgId, input.member_ids);
        await repo.insertTeam(trx, orgId, {
          id,
          name: input.name,
          auto_assign: input.auto_assign ?? false,
          max_open_per_member: input.max_open_per_member ?? 20,
          at: clock.now(),
        });
        await repo.setMembers(trx, orgId, id, input.member_ids ?? []);
      });
      return get(orgId, id);
    },

    async update(orgId: string, teamId: string, patch: TeamPatch) {
      await write(async (trx) => {
        const before = await repo.lockTeam(trx, orgId, teamId);
        if (!before) throw notFound();
        await checkMembers(trx, orgId, patch.member_ids);
        const { member_ids: memberIds, ...fields } = patch;
        const changes = Object.entries(fields).filter(
          ([field, value]) => before[field as keyof typeof before] !== value,
        );
        if (changes.length > 0) {
          await repo.updateTeam(trx, orgId, teamId, { ...Object.fromEntries(changes), updated_at: clock.now() });
        }
        if (memberIds !== undefined) await repo.setMembers(trx, orgId, teamId, memberIds);
        // decisions §19: waiting conversations go out as soon as a member has room.
        await giveOut(trx, orgId, [teamId], clock.now());
      });
      return get(orgId, teamId);
    },

    /** decisions §19: its conversations stay, with `team_id: null` (each a `conversation.updated`). */
    async remove(orgId: string, teamId: string) {
      await transactionWithRetry(db, async (trx) => {
        if (!(await repo.lockTeam(trx, orgId, teamId))) throw notFound();
        const now = clock.now();
        for (const conversationId of await repo.conversationsOfTeam(trx, orgId, teamId)) {
          await applyConversationChange(trx, orgId, conversationId, { team_id: null }, 'request', now);
        }
        await repo.deleteTeam(trx, orgId, teamId);
      });
    },
  };
}

export type TeamsService = ReturnType<typeof createTeamsService>;
