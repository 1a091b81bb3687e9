// The AI assistant's settings, test call and drafts (decisions §20). The test call and drafts send nothing: they
// ask the model what it would answer (409 `ai_disabled` while disabled, 502 `ai_provider_error` when it fails).
import type { Kysely } from 'kysely';
import type { DeploymentModel } from '../../../config.ts';
import type { DB } from '../../../db/schema.ts';
import { ApiError, notFound, validationError } from '../../../http/errors.ts';
import type { Clock } from '../../../lib/clock.ts';
import type { Keyring } from '../../../lib/secrets-box.ts';
import { checkEndpointUrl } from '../../webhook-endpoints/endpoint-url.ts';
import type { TeamLookup } from '../automation-rules.service.ts';
import * as repo from './ai-assistant.repo.ts';
import type { AiAssistantInput, AssistantTestAnswer } from './ai-assistant.schemas.ts';
import type { ModelAnswer, ModelRequest, ModelTurn } from './assistant-model.ts';
import {
  type AssistantSettings,
  DEFAULT_SETTINGS,
  modelFor,
  sealApiKey,
  settingsOf,
  toView,
} from './assistant-settings.ts';

/** How many of the conversation's recent messages the model sees. */
export const RECENT_MESSAGES = 20;

export const aiDisabled = () =>
  new ApiError(409, { code: 'ai_disabled', message: 'Enable the AI assistant first (PUT /v1/ai-assistant).' });
const providerError = (reason: string) => new ApiError(502, { code: 'ai_provider_error', reason });

/** The conversation's recent messages as the model's turns, oldest first; never a private note. */
export async function conversationTurns(db: Kysely<DB>, orgId: string, conversationId: string): Promise<ModelTurn[]> {
  const rows = await repo.recentMessages(db, orgId, conversationId, RECENT_MESSAGES);
  return rows.reverse().map((row) => ({
    role: row.direction === 'inbound' ? 'user' : 'assistant',
    content: row.text ?? `[${row.type}]`,
  }));
}

export interface AssistantDeps {
  db: Kysely<DB>;
  clock: Clock;
  keyring: Keyring;
  /** WEBHOOK_ALLOW_HOSTS: a provider's `base_url` obeys the webhook endpoints' address policy (decisions §11). */
  allowHosts: readonly string[];
  deployment: DeploymentModel;
  teams: TeamLookup;
}

export function createAiAssistantService(deps: AssistantDeps) {
  const { db, keyring } = deps;

  const read = async (orgId: string): Promise<AssistantSettings> =>
    settingsOf(keyring, await repo.findAssistant(db, orgId));

  /** Asks the model; any failure is a 502 `ai_provider_error`. */
  async function ask(settings: AssistantSettings, request: ModelRequest): Promise<ModelAnswer> {
    const model = modelFor(settings, deps.deployment, deps.allowHosts);
    if (!model) throw providerError('no model is configured (AI_BASE_URL, or the provider of PUT /v1/ai-assistant)');
    try {
      return await model.answer(request);
    } catch (error) {
      throw providerError((error as Error).message);
    }
  }

  async function enabledSettings(orgId: string) {
    const settings = await read(orgId);
    if (!settings.enabled) throw aiDisabled();
    return settings;
  }

  return {
    read,

    async get(orgId: string) {
      return toView(await read(orgId));
    },

    async put(orgId: string, input: AiAssistantInput) {
      const current = await read(orgId);
      const provider = input.provider ?? null;
      if (provider) {
        await checkEndpointUrl(provider.base_url, deps.allowHosts, ['body', 'provider', 'base_url']);
      }
      const channelIds = input.channel_ids ?? [];
      const channels = await repo.existingChannels(db, orgId, channelIds);
      channelIds.forEach((id, index) => {
        if (!channels.has(id)) {
          throw validationError(
            ['body', 'channel_ids', index],
            'Not a connected number of the organization',
            'value_error',
            {
              input: id,
            },
          );
        }
      });
      const teamId = input.handoff_team_id ?? null;
      if (teamId !== null && !(await deps.teams(db, orgId, [teamId])).has(teamId)) {
        throw validationError(['body', 'handoff_team_id'], 'Not a team of the organization', 'value_error', {
          input: teamId,
        });
      }
      // A key left out is kept only for the same base_url: another host never receives a key given for the first.
      const apiKey =
        provider === null
          ? null
          : provider.api_key !== undefined
            ? provider.api_key
            : current.provider?.baseUrl === provider.base_url
              ? current.provider.apiKey
              : null;
      const row = await repo.saveAssistant(db, {
        org_id: orgId,
        enabled: input.enabled,
        mode: input.mode ?? DEFAULT_SETTINGS.mode,
        instructions: input.instructions ?? DEFAULT_SETTINGS.instructions,
        faqs: JSON.stringify(input.faqs ?? []),
        channel_ids: JSON.stringify(channelIds),
        handoff_team_id: teamId,
        handoff_message: input.handoff_message ?? DEFAULT_SETTINGS.handoffMessage,
        max_replies_per_conversation: input.max_replies_per_conversation ?? DEFAULT_SETTINGS.maxReplies,
        provider_base_url: provider?.base_url ?? null,
        provider_model: provider?.model ?? null,
        ...sealApiKey(keyring, orgId, apiKey),
        updated_at: deps.clock.now(),
      });
      return toView(settingsOf(keyring, row));
    },

    /** What the assistant would answer a contact's message; sends nothing. */
    async test(orgId: string, text: string): Promise<AssistantTestAnswer> {
      const settings = await enabledSettings(orgId);
      const answer = await ask(settings, {
        instructions: settings.instructions,
        faqs: settings.faqs,
        turns: [{ role: 'user', content: text }],
      });
      return answer.action === 'handoff'
        ? { action: 'handoff', text: settings.handoffMessage, reason: answer.reason }
        : { action: answer.action, text: answer.text, reason: answer.reason };
    },

    /** A suggested reply for a person, from the conversation's recent messages; sends nothing. */
    async draft(orgId: string, conversationId: string): Promise<{ text: string }> {
      if (!(await repo.conversationExists(db, orgId, conversationId))) throw notFound();
      const settings = await enabledSettings(orgId);
      const answer = await ask(settings, {
        instructions: settings.instructions,
        faqs: settings.faqs,
        turns: await conversationTurns(db, orgId, conversationId),
      });
      return { text: answer.text ?? '' };
    },
  };
}

export type AiAssistantService = ReturnType<typeof createAiAssistantService>;
