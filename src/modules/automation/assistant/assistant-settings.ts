// decisions §20: the assistant's settings as stored and as shown, and the model they choose: the organization's
// provider (its API key sealed at rest like endpoint secrets, D264), else the deployment's (AI_BASE_URL, AI_MODEL,
// AI_API_KEY), else the sandbox when AI_PROVIDER=sandbox, else none.
import type { Kysely } from 'kysely';
import { AI_TIMEOUT_MS, type DeploymentModel } from '../../../config.ts';
import type { DB } from '../../../db/schema.ts';
import { type Keyring, open, seal } from '../../../lib/secrets-box.ts';
import { type AssistantRow, replaceSealedKey } from './ai-assistant.repo.ts';
import type { AiAssistant } from './ai-assistant.schemas.ts';
import { DEFAULT_HANDOFF_MESSAGE } from './ai-assistant.schemas.ts';
import type { AssistantModel, Faq } from './assistant-model.ts';
import { guardedFetch } from './guarded-fetch.ts';
import { openAiModel } from './openai-model.ts';
import { sandboxModel } from './sandbox-model.ts';

export const DEFAULT_DEPLOYMENT_MODEL: DeploymentModel = { provider: 'sandbox', timeoutMs: AI_TIMEOUT_MS };

/** The settings the service works with: stored values, or the defaults of decisions §20. */
export interface AssistantSettings {
  enabled: boolean;
  mode: 'draft' | 'autonomous';
  instructions: string;
  faqs: Faq[];
  channelIds: string[];
  handoffTeamId: string | null;
  handoffMessage: string;
  maxReplies: number;
  provider: { baseUrl: string; model: string; apiKey: string | null } | null;
}

export const DEFAULT_SETTINGS: AssistantSettings = {
  enabled: false,
  mode: 'draft',
  instructions: '',
  faqs: [],
  channelIds: [],
  handoffTeamId: null,
  handoffMessage: DEFAULT_HANDOFF_MESSAGE,
  maxReplies: 10,
  provider: null,
};

const keyContext = (orgId: string) => `ai_assistants/${orgId}/provider_api_key`;

export const sealApiKey = (keyring: Keyring, orgId: string, apiKey: string | null) => {
  if (apiKey === null) return { provider_api_key: null, api_key_key_id: null };
  const sealed = seal(keyring, apiKey, keyContext(orgId));
  return { provider_api_key: sealed.ciphertext, api_key_key_id: sealed.keyId };
};

/** The stored row as settings, the provider's key opened. Throws SecretsKeyError when its key is not in the keyring. */
export function settingsOf(keyring: Keyring, row: AssistantRow | undefined): AssistantSettings {
  if (!row) return DEFAULT_SETTINGS;
  const apiKey =
    row.provider_api_key === null || row.api_key_key_id === null
      ? null
      : open(keyring, { ciphertext: row.provider_api_key, keyId: row.api_key_key_id }, keyContext(row.org_id));
  return {
    enabled: row.enabled,
    mode: row.mode as AssistantSettings['mode'],
    instructions: row.instructions,
    faqs: row.faqs,
    channelIds: row.channel_ids,
    handoffTeamId: row.handoff_team_id,
    handoffMessage: row.handoff_message,
    maxReplies: row.max_replies_per_conversation,
    provider:
      row.provider_base_url !== null && row.provider_model !== null
        ? { baseUrl: row.provider_base_url, model: row.provider_model, apiKey }
        : null,
  };
}

/** The settings as the API shows them: the provider's key never, only whether one is stored. */
export const toView = (settings: AssistantSettings): AiAssistant => ({
  enabled: settings.enabled,
  mode: settings.mode,
  instructions: settings.instructions,
  faqs: settings.faqs,
  channel_ids: settings.channelIds,
  handoff_team_id: settings.handoffTeamId,
  handoff_message: settings.handoffMessage,
  max_replies_per_conversation: settings.maxReplies,
  provider: settings.provider
    ? {
        base_url: settings.provider.baseUrl,
        model: settings.provider.model,
        has_api_key: settings.provider.apiKey !== null,
      }
    : null,
});

/** The model the settings choose, or undefined when none is configured anywhere. */
export function modelFor(
  settings: AssistantSettings,
  deployment: DeploymentModel,
  allowHosts: readonly string[],
): AssistantModel | undefined {
  if (settings.provider) {
    // An organization's endpoint is under the webhook endpoints' address policy at connect time (decisions §11).
    return openAiModel({
      baseUrl: settings.provider.baseUrl,
      model: settings.provider.model,
      apiKey: settings.provider.apiKey,
      timeoutMs: deployment.timeoutMs,
      fetch: guardedFetch(allowHosts),
    });
  }
  if (deployment.baseUrl && deployment.model) {
    return openAiModel({
      baseUrl: deployment.baseUrl,
      model: deployment.model,
      apiKey: deployment.apiKey ?? null,
      timeoutMs: deployment.timeoutMs,
    });
  }
  return deployment.provider === 'sandbox' ? sandboxModel : undefined;
}

/**
 * Seals again, under the keyring's current key, every provider key sealed under another one (a key rotation), as
 * `resealWebhookSecrets` does for endpoint secrets; answers how many. Each update applies only if the row is as
 * read, so a concurrent PUT is never overwritten. Run at every start.
 */
export async function resealAssistantKeys(db: Kysely<DB>, keyring: Keyring, batch = 500): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await db
      .selectFrom('ai_assistants')
      .select(['org_id', 'provider_api_key', 'api_key_key_id'])
      .where('provider_api_key', 'is not', null)
      .where('api_key_key_id', '!=', keyring.currentId)
      .limit(batch)
      .execute();
    let changed = 0;
    for (const row of rows) {
      const apiKey = open(
        keyring,
        { ciphertext: row.provider_api_key as string, keyId: row.api_key_key_id as string },
        keyContext(row.org_id),
      );
      const sealed = sealApiKey(keyring, row.org_id, apiKey);
      if (await replaceSealedKey(db, row.org_id, row.provider_api_key as string, sealed)) changed += 1;
    }
    total += changed;
    if (rows.length === 0 || changed === 0) return total;
  }
}
