// Row types of decisions §20's tables (automation and the AI assistant), kept beside schema.ts's DB, which extends
// them.
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json<T> = ColumnType<T, string, string>;

export interface BusinessHoursTable {
  org_id: string;
  enabled: boolean;
  week: Json<{ day: string; open: string; close: string }[]>;
  away_message: Json<{ text: string } | null>;
  updated_at: Timestamp;
}

export interface AutomationRulesTable {
  org_id: string;
  id: string;
  name: string;
  active: boolean;
  event: string;
  conditions: Json<{ field: string; operator: string; value: unknown }[]>;
  actions: Json<({ type: string } & Record<string, unknown>)[]>;
  stop: boolean;
  position: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AutomationRuleRunsTable {
  org_id: string;
  id: string;
  rule_id: string;
  conversation_id: string;
  message_id: string;
  actions: Json<{ type: string; outcome: string; reason?: string }[]>;
  created_at: Timestamp;
}

export interface AiAssistantsTable {
  org_id: string;
  enabled: boolean;
  mode: string;
  instructions: string;
  faqs: Json<{ question: string; answer: string }[]>;
  channel_ids: Json<string[]>;
  handoff_team_id: string | null;
  handoff_message: string;
  max_replies_per_conversation: number;
  provider_base_url: string | null;
  provider_model: string | null;
  provider_api_key: string | null;
  api_key_key_id: string | null;
  updated_at: Generated<Date>;
}

export interface ConversationAutomationTable {
  org_id: string;
  conversation_id: string;
  away_sent_at: Date | null;
  ai_replies: Generated<number>;
}

export interface AssistantJobsTable {
  org_id: string;
  id: string;
  conversation_id: string;
  message_id: string;
  attempts: Generated<number>;
  lease_until: Date | null;
  lease_token: string | null;
  created_at: Timestamp;
}

export interface AutomationTables {
  conversation_automation: ConversationAutomationTable;
  assistant_jobs: AssistantJobsTable;
  business_hours: BusinessHoursTable;
  automation_rules: AutomationRulesTable;
  automation_rule_runs: AutomationRuleRunsTable;
  ai_assistants: AiAssistantsTable;
}
