// Automation rules (decisions §20): CRUD with every refusal a 422 at its place, at most 100 rules per organization,
// and each rule's runs (newest first, paginated).
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound, validationError } from '../../http/errors.ts';
import { decodeCursor, encodeCursor } from '../../http/pagination.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import * as repo from './automation-rules.repo.ts';
import type {
  AutomationRule,
  AutomationRuleInput,
  AutomationRulePatch,
  AutomationRuleRun,
  RunListQuery,
} from './automation-rules.schemas.ts';
import { type ActionInput, checkAction, checkCondition, MAX_RULES, type RuleReferences } from './rule-definitions.ts';

export function toRule(row: repo.RuleRow): AutomationRule {
  return {
    id: row.id,
    name: row.name,
    active: row.active,
    event: row.event,
    conditions: row.conditions as AutomationRule['conditions'],
    actions: row.actions as AutomationRule['actions'],
    stop: row.stop,
    position: row.position,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const toRun = (row: repo.RunRow): AutomationRuleRun => ({
  id: row.id,
  conversation_id: row.conversation_id,
  message_id: row.message_id,
  actions: row.actions,
  created_at: row.created_at.toISOString(),
});

/** Checks whether the teams a rule names exist (decisions §19's teams); answers the ids that do. */
export type TeamLookup = (db: Kysely<DB>, orgId: string, ids: string[]) => Promise<Set<string>>;

export function createAutomationRulesService(deps: { db: Kysely<DB>; clock: Clock; teams: TeamLookup }) {
  const { db, clock } = deps;

  /** The conditions and actions checked and normalized, then the users and teams they name, each at its place. */
  async function checkBody(orgId: string, body: { conditions?: unknown[]; actions?: unknown[] }) {
    const references: RuleReferences = { users: [], teams: [] };
    const conditions = body.conditions?.map((condition, index) =>
      checkCondition(condition as never, ['body', 'conditions', index], references),
    );
    const actions = body.actions?.map((action, index) =>
      checkAction(action as ActionInput, ['body', 'actions', index], references, clock.now()),
    );
    const users = await repo.existingUsers(
      db,
      orgId,
      references.users.map((user) => user.id),
    );
    const unknownUser = references.users.find((user) => !users.has(user.id));
    if (unknownUser) {
      throw validationError(unknownUser.loc, 'Not a user of the organization', 'value_error', {
        input: unknownUser.id,
      });
    }
    const teams = await deps.teams(
      db,
      orgId,
      references.teams.map((team) => team.id),
    );
    const unknownTeam = references.teams.find((team) => !teams.has(team.id));
    if (unknownTeam) {
      throw validationError(unknownTeam.loc, 'Not a team of the organization', 'value_error', {
        input: unknownTeam.id,
      });
    }
    return { conditions, actions };
  }

  return {
    async list(orgId: string) {
      return { items: (await repo.listRules(db, orgId)).map(toRule) };
    },

    async get(orgId: string, id: string) {
      const row = await repo.findRule(db, orgId, id);
      if (!row) throw notFound();
      return toRule(row);
    },

    async create(orgId: string, input: AutomationRuleInput) {
      const { conditions, actions } = await checkBody(orgId, {
        conditions: input.conditions ?? [],
        actions: input.actions,
      });
      return db.transaction().execute(async (trx) => {
        await repo.lockOrganization(trx, orgId);
        const stats = await repo.ruleStats(trx, orgId);
        if (stats.count >= MAX_RULES) {
          throw new ApiError(422, {
            code: 'automation_rule_limit',
            limit: MAX_RULES,
            message: `An organization can have at most ${MAX_RULES} automation rules.`,
          });
        }
        const now = clock.now();
        const row = await repo.insertRule(trx, {
          org_id: orgId,
          id: newId('rule'),
          name: input.name,
          active: input.active ?? true,
          event: input.event,
          conditions: JSON.stringify(conditions),
          actions: JSON.stringify(actions),
          stop: input.stop ?? false,
          position: input.position ?? (stats.lastPosition === null ? 0 : stats.lastPosition + 1),
          created_at: now,
          updated_at: now,
        });
        return toRule(row);
      });
    },

    async update(orgId: string, id: string, patch: AutomationRulePatch) {
      const { conditions, actions } = await checkBody(orgId, patch);
      return db.transaction().execute(async (trx) => {
        const current = await repo.findRule(trx, orgId, id, { lock: true });
        if (!current) throw notFound();
        const changes = {
          ...(patch.name !== undefined ? { name: patch.name } : {}),
          ...(patch.active !== undefined ? { active: patch.active } : {}),
          ...(patch.event !== undefined ? { event: patch.event } : {}),
          ...(conditions !== undefined ? { conditions: JSON.stringify(conditions) } : {}),
          ...(actions !== undefined ? { actions: JSON.stringify(actions) } : {}),
          ...(patch.stop !== undefined ? { stop: patch.stop } : {}),
          ...(patch.position !== undefined ? { position: patch.position } : {}),
        };
        if (Object.keys(changes).length === 0) return toRule(current);
        const row = await repo.updateRule(trx, orgId, id, { ...changes, updated_at: clock.now() });
        if (!row) throw notFound();
        return toRule(row);
      });
    },

    async remove(orgId: string, id: string) {
      if (!(await repo.deleteRule(db, orgId, id))) throw notFound();
    },

    async runs(orgId: string, ruleId: string, query: RunListQuery) {
      const limit = query.limit ?? 50;
      const scope = `automation-rule-runs:${ruleId}`;
      // A missing rule answers 404 before a bad cursor's 422.
      let after: [string, string] | undefined;
      let badCursor: unknown;
      try {
        const decoded = query.cursor ? decodeCursor(query.cursor, scope, null) : undefined;
        if (decoded !== undefined) {
          const [createdAt, id] = decoded;
          if (typeof createdAt !== 'string' || typeof id !== 'string' || Number.isNaN(Date.parse(createdAt))) {
            throw validationError(['query', 'cursor'], 'Invalid cursor', 'value_error', { input: query.cursor });
          }
          after = [createdAt, id];
        }
      } catch (error) {
        badCursor = error;
      }
      const { found, rows } = await repo.listRuns(db, orgId, ruleId, { after, limit: limit + 1 });
      if (!found) throw notFound();
      if (badCursor !== undefined) throw badCursor;
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        items: page.map(toRun),
        next_cursor:
          rows.length > limit && last ? encodeCursor(scope, null, [last.created_at.toISOString(), last.id]) : null,
      };
    },
  };
}

export type AutomationRulesService = ReturnType<typeof createAutomationRulesService>;
