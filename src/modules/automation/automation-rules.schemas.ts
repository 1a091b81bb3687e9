// decisions §20: the shapes of automation rules and their runs.
import { type Static, Type } from 'typebox';
import { CursorQuery, LimitQuery, Page } from '../../http/pagination.ts';
import { DateTime, DateTimeInput, IdParam, Nullable, OpenEnum, StringEnum } from '../../http/schemas.ts';
import {
  ACTION_TYPES,
  CONDITION_FIELDS,
  CONVERSATION_STATUSES,
  MAX_ACTIONS,
  MAX_CONDITIONS,
  OPERATORS,
  PRIORITIES,
  RULE_EVENTS,
} from './rule-definitions.ts';

const Name = Type.String({ minLength: 1, maxLength: 100 });

const ConditionSchema = Type.Object(
  {
    field: Type.String({
      minLength: 1,
      maxLength: 200,
      description: `One of ${CONDITION_FIELDS.map((field) => `\`${field}\``).join(', ')}.`,
    }),
    operator: StringEnum(OPERATORS, {
      description:
        '`message.text` takes `equals`, `contains`, `starts_with` and `matches` (a regular expression of at most ' +
        '200 characters, RE2 syntax); the contact fields `equals` and `contains`; `conversation.labels` ' +
        '`contains`; the others `equals`. All ignore case.',
    }),
    value: Type.Union([Type.String(), Type.Boolean()], {
      description:
        'A string; `true`/`false` for `within_business_hours`; `unassigned`, `ai` or a user id for ' +
        '`conversation.assignee`.',
    }),
  },
  { additionalProperties: false, title: 'AutomationCondition' },
);

const AssigneeSchema = Nullable(
  Type.Union([
    Type.Object({ type: Type.Literal('user'), id: Type.String() }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('ai') }, { additionalProperties: false }),
  ]),
);

/** An action as a request gives it: its `type` and the fields of that type (checked by the service). */
const ActionInputSchema = Type.Object(
  {
    type: Type.String({ description: `One of ${ACTION_TYPES.map((type) => `\`${type}\``).join(', ')}.` }),
    text: Type.Optional(Type.String({ description: '`send_text` (1–4,096) and `add_note` (1–10,000).' })),
    labels: Type.Optional(Type.Array(Type.String(), { description: '`add_labels`: 1–20 labels.' })),
    assignee: Type.Optional(
      Type.Unknown({ description: '`assign`: null, `{"type": "user", "id"}` or `{"type": "ai"}`.' }),
    ),
    team_id: Type.Optional(Nullable(Type.String({ description: '`assign_team`: a team, or null.' }))),
    status: Type.Optional(Type.String({ description: '`set_status`.' })),
    snoozed_until: Type.Optional(DateTimeInput),
    priority: Type.Optional(Type.String({ description: '`set_priority`.' })),
  },
  { additionalProperties: false, title: 'AutomationActionInput' },
);

const ActionSchema = Type.Union(
  [
    Type.Object({ type: Type.Literal('send_text'), text: Type.String() }, { additionalProperties: false }),
    Type.Object(
      { type: Type.Literal('add_labels'), labels: Type.Array(Type.String()) },
      { additionalProperties: false },
    ),
    Type.Object({ type: Type.Literal('assign'), assignee: AssigneeSchema }, { additionalProperties: false }),
    Type.Object(
      { type: Type.Literal('assign_team'), team_id: Nullable(Type.String()) },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('set_status'),
        status: OpenEnum(CONVERSATION_STATUSES),
        snoozed_until: Type.Optional(DateTime),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      { type: Type.Literal('set_priority'), priority: OpenEnum(PRIORITIES) },
      { additionalProperties: false },
    ),
    Type.Object({ type: Type.Literal('add_note'), text: Type.String() }, { additionalProperties: false }),
  ],
  { title: 'AutomationAction', description: 'One action; its fields depend on its `type`.' },
);

const example = {
  id: 'rule_01JH5ZP5C6D7E8F9G0H1J2K3L4',
  name: 'Spanish speakers to the Spanish team',
  active: true,
  event: 'conversation.created',
  conditions: [{ field: 'message.text', operator: 'matches', value: '\\b(hola|gracias)\\b' }],
  actions: [
    { type: 'assign_team', team_id: 'team_01JH5ZP5C6D7E8F9G0H1J2K3L4' },
    { type: 'add_labels', labels: ['es'] },
  ],
  stop: false,
  position: 0,
  created_at: '2026-01-15T09:30:00.000Z',
  updated_at: '2026-01-15T09:30:00.000Z',
};

export const AutomationRuleSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    active: Type.Boolean(),
    event: OpenEnum(RULE_EVENTS),
    conditions: Type.Array(ConditionSchema, { description: 'All must hold; none: every message.' }),
    actions: Type.Array(ActionSchema),
    stop: Type.Boolean({ description: 'When the rule matched, no later rule runs for this message.' }),
    position: Type.Integer({ description: 'Rules run by position, lowest first (ties: the older rule first).' }),
    created_at: DateTime,
    updated_at: DateTime,
  },
  {
    additionalProperties: false,
    title: 'AutomationRule',
    description: 'A rule run on every contact message (decisions §20).',
    examples: [example],
  },
);
export type AutomationRule = Static<typeof AutomationRuleSchema>;

export const AutomationRuleList = Type.Object(
  { items: Type.Array(AutomationRuleSchema) },
  {
    additionalProperties: false,
    title: 'AutomationRuleList',
    description: 'Every rule of the organization (at most 100), in the order they run.',
  },
);

const inputFields = {
  name: Name,
  active: Type.Boolean({ default: true }),
  event: StringEnum(RULE_EVENTS),
  conditions: Type.Array(ConditionSchema, { maxItems: MAX_CONDITIONS }),
  actions: Type.Array(ActionInputSchema, { minItems: 1, maxItems: MAX_ACTIONS }),
  stop: Type.Boolean({ default: false }),
  position: Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'After the last rule when left out.' }),
};

export const AutomationRuleInput = Type.Object(
  {
    name: inputFields.name,
    active: Type.Optional(inputFields.active),
    event: inputFields.event,
    conditions: Type.Optional(inputFields.conditions),
    actions: inputFields.actions,
    stop: Type.Optional(inputFields.stop),
    position: Type.Optional(inputFields.position),
  },
  {
    additionalProperties: false,
    title: 'AutomationRuleInput',
    examples: [
      {
        name: example.name,
        event: example.event,
        conditions: example.conditions,
        actions: example.actions,
      },
    ],
  },
);
export type AutomationRuleInput = Static<typeof AutomationRuleInput>;

export const AutomationRulePatch = Type.Object(
  {
    name: Type.Optional(inputFields.name),
    active: Type.Optional(Type.Boolean()),
    event: Type.Optional(inputFields.event),
    conditions: Type.Optional(inputFields.conditions),
    actions: Type.Optional(inputFields.actions),
    stop: Type.Optional(Type.Boolean()),
    position: Type.Optional(inputFields.position),
  },
  { additionalProperties: false, title: 'AutomationRulePatch', examples: [{ active: false }] },
);
export type AutomationRulePatch = Static<typeof AutomationRulePatch>;

export const RuleParams = IdParam('rule_id');

export const AutomationRuleRunSchema = Type.Object(
  {
    id: Type.String(),
    conversation_id: Type.String(),
    message_id: Type.String({ description: 'The contact message that ran the rule.' }),
    actions: Type.Array(
      Type.Object(
        {
          type: OpenEnum(ACTION_TYPES),
          outcome: OpenEnum(['done', 'skipped', 'failed']),
          reason: Type.Optional(
            Type.String({ description: 'Why it was skipped or failed, e.g. `window_closed`, `opted_out`.' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    created_at: DateTime,
  },
  {
    additionalProperties: false,
    title: 'AutomationRuleRun',
    description: 'What a rule did for one contact message; kept 30 days.',
    examples: [
      {
        id: 'run_01JH5ZP5C6D7E8F9G0H1J2K3L4',
        conversation_id: 'conv_01JH5ZP5C6D7E8F9G0H1J2K3L4',
        message_id: 'msg_01JH5ZP5C6D7E8F9G0H1J2K3L4',
        actions: [
          { type: 'send_text', outcome: 'skipped', reason: 'opted_out' },
          { type: 'add_labels', outcome: 'done' },
        ],
        created_at: '2026-01-15T09:30:00.000Z',
      },
    ],
  },
);
export type AutomationRuleRun = Static<typeof AutomationRuleRunSchema>;

export const AutomationRuleRunPage = Page(
  AutomationRuleRunSchema,
  {},
  { title: 'AutomationRuleRunPage', description: 'A page of a rule’s runs, newest first.' },
);

export const RunListQuery = Type.Object(
  { limit: Type.Optional(LimitQuery(50, 200)), cursor: Type.Optional(CursorQuery) },
  { additionalProperties: false },
);
export type RunListQuery = Static<typeof RunListQuery>;
