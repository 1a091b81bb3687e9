// decisions §20: the shapes of the AI assistant's settings, its test call and drafts.
import { type Static, Type } from 'typebox';
import { IdParam, Nullable, OpenEnum, StringEnum } from '../../../http/schemas.ts';

export const DEFAULT_HANDOFF_MESSAGE = 'Let me get a person to help you.';
export const MODES = ['draft', 'autonomous'] as const;
export const ACTIONS = ['reply', 'handoff', 'resolve'] as const;
export const MAX_FAQS = 200;

const Faq = Type.Object(
  { question: Type.String({ minLength: 1, maxLength: 1000 }), answer: Type.String({ minLength: 1, maxLength: 4096 }) },
  { additionalProperties: false },
);

const fields = {
  enabled: Type.Boolean({ description: 'False by default: no assistant messages, drafts or test calls.' }),
  mode: StringEnum(MODES, {
    description: '`draft`: only suggests replies to people; `autonomous`: answers contacts on the numbers it serves.',
  }),
  instructions: Type.String({ maxLength: 8000, description: 'What the model is told about the business.' }),
  faqs: Type.Array(Faq, { maxItems: MAX_FAQS }),
  channel_ids: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
    maxItems: 100,
    uniqueItems: true,
    description: 'The numbers (`channel_id`) it serves in autonomous mode; empty: all.',
  }),
  handoff_team_id: Nullable(Type.String({ description: 'The team a handed-off conversation goes to.' })),
  handoff_message: Type.String({ minLength: 1, maxLength: 4096 }),
  max_replies_per_conversation: Type.Integer({ minimum: 1, maximum: 50 }),
};

const ProviderView = Type.Object(
  {
    base_url: Type.String(),
    model: Type.String(),
    has_api_key: Type.Boolean({ description: 'Whether a key is stored (it is never shown).' }),
  },
  { additionalProperties: false },
);

const ProviderInput = Type.Object(
  {
    base_url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description:
        'An OpenAI-compatible API, e.g. `https://api.openai.com/v1`: `https://` to a public address, like webhook ' +
        'endpoints (`http://` and private addresses only for hosts in `WEBHOOK_ALLOW_HOSTS`).',
    }),
    model: Type.String({ minLength: 1, maxLength: 200 }),
    api_key: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 1000,
          description:
            'Sealed at rest, never shown. Left out: the stored key is kept while `base_url` stays the same; null: none.',
        }),
      ),
    ),
  },
  { additionalProperties: false },
);

const example = {
  enabled: true,
  mode: 'autonomous',
  instructions: 'We are a bakery in Lisbon. Be brief and friendly.',
  faqs: [{ question: 'opening hours', answer: 'Every day from 8:00 to 19:00.' }],
  channel_ids: [],
  handoff_team_id: null,
  handoff_message: DEFAULT_HANDOFF_MESSAGE,
  max_replies_per_conversation: 10,
};

export const AiAssistantSchema = Type.Object(
  {
    ...fields,
    mode: OpenEnum(MODES),
    provider: Type.Union([ProviderView, Type.Null()], {
      description: 'The organization’s own model; null uses the deployment’s (`AI_BASE_URL`, or the sandbox).',
    }),
  },
  {
    additionalProperties: false,
    title: 'AiAssistant',
    description: 'The AI assistant’s settings (decisions §20). Disabled by default.',
    examples: [
      { ...example, provider: { base_url: 'https://api.openai.com/v1', model: 'gpt-4o-mini', has_api_key: true } },
    ],
  },
);
export type AiAssistant = Static<typeof AiAssistantSchema>;

export const AiAssistantInput = Type.Object(
  {
    enabled: fields.enabled,
    mode: Type.Optional(fields.mode),
    instructions: Type.Optional(fields.instructions),
    faqs: Type.Optional(fields.faqs),
    channel_ids: Type.Optional(fields.channel_ids),
    handoff_team_id: Type.Optional(fields.handoff_team_id),
    handoff_message: Type.Optional(fields.handoff_message),
    max_replies_per_conversation: Type.Optional(fields.max_replies_per_conversation),
    provider: Type.Optional(Nullable(ProviderInput)),
  },
  {
    additionalProperties: false,
    title: 'AiAssistantInput',
    description:
      'Replaces the settings: a field left out takes its default (`mode` draft, `instructions` empty, no FAQs, ' +
      'every number, no team, the default handoff message, 10 replies, no provider).',
    examples: [
      { ...example, provider: { base_url: 'https://api.openai.com/v1', model: 'gpt-4o-mini', api_key: 'sk-…' } },
    ],
  },
);
export type AiAssistantInput = Static<typeof AiAssistantInput>;

export const AssistantTestInput = Type.Object(
  { text: Type.String({ minLength: 1, maxLength: 4096, description: 'A contact’s message.' }) },
  { additionalProperties: false, title: 'AiAssistantTestInput', examples: [{ text: 'What are your opening hours?' }] },
);

export const AssistantTestAnswer = Type.Object(
  {
    action: OpenEnum(ACTIONS),
    text: Nullable(Type.String({ description: 'What the contact would receive (a handoff: the handoff message).' })),
    reason: Nullable(Type.String({ description: 'Why it hands off or resolves, when the model says.' })),
  },
  {
    additionalProperties: false,
    title: 'AiAssistantTestAnswer',
    description: 'What the assistant would do with the message.',
    examples: [{ action: 'reply', text: 'Every day from 8:00 to 19:00.', reason: null }],
  },
);
export type AssistantTestAnswer = Static<typeof AssistantTestAnswer>;

export const AiDraft = Type.Object(
  {
    text: Type.String({
      description: 'A suggested reply for a person to edit and send; empty when the assistant would hand off.',
    }),
  },
  {
    additionalProperties: false,
    title: 'AiDraft',
    description: 'A suggested reply; nothing was sent.',
    examples: [{ text: 'We open every day at 8:00.' }],
  },
);

export const ConversationParams = IdParam('conversation_id');
