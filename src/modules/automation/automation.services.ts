// decisions §20's services, built together by the wiring.
import type { Kysely } from 'kysely';
import type { DeploymentModel } from '../../config.ts';
import type { DB } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Keyring } from '../../lib/secrets-box.ts';
import { createAiAssistantService } from './assistant/ai-assistant.service.ts';
import { DEFAULT_DEPLOYMENT_MODEL } from './assistant/assistant-settings.ts';
import { createAutomationRulesService, type TeamLookup } from './automation-rules.service.ts';
import { createBusinessHoursService } from './business-hours.service.ts';

export interface AutomationDeps {
  db: Kysely<DB>;
  clock: Clock;
  keyring: Keyring;
  /** WEBHOOK_ALLOW_HOSTS (decisions §11's address policy, which a provider's base_url obeys). */
  allowHosts: readonly string[];
  /** The deployment's model (AI_PROVIDER, AI_BASE_URL, AI_MODEL, AI_API_KEY, AI_TIMEOUT_MS). */
  ai?: Partial<DeploymentModel> | undefined;
}

/** decisions §19's teams of the organization among `ids`. */
const findTeams: TeamLookup = async (db, orgId, ids) => {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('teams').select('id').where('org_id', '=', orgId).where('id', 'in', ids).execute();
  return new Set(rows.map((row) => row.id));
};

export function createAutomationServices(deps: AutomationDeps) {
  return {
    businessHours: createBusinessHoursService(deps),
    rules: createAutomationRulesService({ ...deps, teams: findTeams }),
    assistant: createAiAssistantService({
      ...deps,
      deployment: { ...DEFAULT_DEPLOYMENT_MODEL, ...deps.ai },
      teams: findTeams,
    }),
  };
}

export type AutomationServices = ReturnType<typeof createAutomationServices>;
