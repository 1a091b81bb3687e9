// decisions §20: what a rule may say — its conditions' fields and operators, its actions and their fields — checked
// when a rule is saved, each refusal a 422 at its place (`["body","conditions",i,"operator"]`). Regular expressions
// compile with RE2JS (linear-time matching, no backtracking: a pattern like `(a+)+$` cannot stall the server, D262).
import { RE2JS } from 're2js';
import { validationError } from '../../http/errors.ts';
import { KEY_PATTERN } from '../../lib/keys.ts';

export const RULE_EVENTS = ['message.received', 'conversation.created'] as const;
export const OPERATORS = ['equals', 'contains', 'starts_with', 'matches'] as const;
export type Operator = (typeof OPERATORS)[number];
export const ACTION_TYPES = [
  'send_text',
  'add_labels',
  'assign',
  'assign_team',
  'set_status',
  'set_priority',
  'add_note',
] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

export const CONVERSATION_STATUSES = ['open', 'pending', 'snoozed', 'resolved'] as const;
export const PRIORITIES = ['none', 'low', 'medium', 'high', 'urgent'] as const;

export const MAX_RULES = 100;
export const MAX_CONDITIONS = 20;
export const MAX_ACTIONS = 10;
export const MAX_PATTERN = 200;
export const MAX_LABELS = 20;

/** The condition fields (decisions §20) and the operators each takes; `contact.properties.KEY` by its prefix. */
const FIELD_OPERATORS: Record<string, readonly Operator[]> = {
  'message.text': OPERATORS,
  'message.type': ['equals'],
  within_business_hours: ['equals'],
  'contact.country': ['equals', 'contains'],
  'contact.funnel_stage_id': ['equals', 'contains'],
  'conversation.status': ['equals'],
  'conversation.labels': ['contains'],
  'conversation.assignee': ['equals'],
};
export const PROPERTY_FIELD_PREFIX = 'contact.properties.';
const PROPERTY_OPERATORS: readonly Operator[] = ['equals', 'contains'];
const KEY = new RegExp(KEY_PATTERN);

export const CONDITION_FIELDS = [...Object.keys(FIELD_OPERATORS), `${PROPERTY_FIELD_PREFIX}KEY`];

export interface Condition {
  field: string;
  operator: Operator;
  value: string | boolean;
}

export type Assignee = null | { type: 'user'; id: string } | { type: 'ai' };

export type Action =
  | { type: 'send_text'; text: string }
  | { type: 'add_labels'; labels: string[] }
  | { type: 'assign'; assignee: Assignee }
  | { type: 'assign_team'; team_id: string | null }
  | { type: 'set_status'; status: (typeof CONVERSATION_STATUSES)[number]; snoozed_until?: string }
  | { type: 'set_priority'; priority: (typeof PRIORITIES)[number] }
  | { type: 'add_note'; text: string };

/** What a rule names that only the database can confirm: users and teams of the organization. */
export interface RuleReferences {
  users: { id: string; loc: (string | number)[] }[];
  teams: { id: string; loc: (string | number)[] }[];
}

const operatorsOf = (field: string): readonly Operator[] | undefined =>
  field.startsWith(PROPERTY_FIELD_PREFIX)
    ? KEY.test(field.slice(PROPERTY_FIELD_PREFIX.length))
      ? PROPERTY_OPERATORS
      : undefined
    : FIELD_OPERATORS[field];

/** The compiled pattern of a `matches` condition (ignoring case, decisions §20). Throws RE2JS's syntax error. */
export const compilePattern = (pattern: string) => RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE);

/** Checks one condition; answers it normalized. */
export function checkCondition(
  raw: { field: string; operator: string; value: unknown },
  loc: (string | number)[],
  references: RuleReferences,
): Condition {
  const refuse = (at: string, msg: string, input: unknown) =>
    validationError([...loc, at], msg, 'value_error', { input });
  const operators = operatorsOf(raw.field);
  if (!operators) throw refuse('field', `Unknown field; one of ${CONDITION_FIELDS.join(', ')}`, raw.field);
  const operator = raw.operator as Operator;
  if (!operators.includes(operator)) {
    throw refuse('operator', `${raw.field} takes ${operators.join(', ')}`, raw.operator);
  }
  const value = raw.value;
  if (raw.field === 'within_business_hours') {
    if (typeof value !== 'boolean') throw refuse('value', 'Must be true or false', value);
    return { field: raw.field, operator, value };
  }
  if (typeof value !== 'string' || value.length === 0 || value.length > 1000) {
    throw refuse('value', 'Must be a string of 1 to 1,000 characters', value);
  }
  if (operator === 'matches') {
    if (value.length > MAX_PATTERN) throw refuse('value', `A pattern has at most ${MAX_PATTERN} characters`, value);
    try {
      compilePattern(value);
    } catch (error) {
      throw refuse('value', `The pattern does not compile: ${(error as Error).message}`, value);
    }
  }
  if (raw.field === 'conversation.status' && !(CONVERSATION_STATUSES as readonly string[]).includes(value)) {
    throw refuse('value', `One of ${CONVERSATION_STATUSES.join(', ')}`, value);
  }
  if (raw.field === 'conversation.assignee' && value !== 'unassigned' && value !== 'ai') {
    references.users.push({ id: value, loc: [...loc, 'value'] });
  }
  return { field: raw.field, operator, value };
}

/** An action as the request gives it: `type` and any of the fields of the action types. */
export interface ActionInput {
  type: string;
  text?: string;
  labels?: string[];
  assignee?: unknown;
  team_id?: string | null;
  status?: string;
  snoozed_until?: string;
  priority?: string;
}

const ACTION_FIELDS: Record<ActionType, readonly (keyof ActionInput)[]> = {
  send_text: ['text'],
  add_labels: ['labels'],
  assign: ['assignee'],
  assign_team: ['team_id'],
  set_status: ['status', 'snoozed_until'],
  set_priority: ['priority'],
  add_note: ['text'],
};
const OPTIONAL_FIELDS = new Set<keyof ActionInput>(['snoozed_until']);
const ALL_ACTION_FIELDS = [...new Set(Object.values(ACTION_FIELDS).flat())];

const SNOOZE_MAX_MS = 90 * 24 * 60 * 60 * 1000;

/** Checks one action: which fields its type takes and needs, and each field's rule; answers it normalized. */
export function checkAction(raw: ActionInput, loc: (string | number)[], references: RuleReferences, now: Date): Action {
  const refuse = (at: (string | number)[], msg: string, input: unknown, type = 'value_error') =>
    validationError([...loc, ...at], msg, type, { input });
  const type = raw.type as ActionType;
  const fields = ACTION_FIELDS[type];
  if (!fields) throw refuse(['type'], `Unknown action; one of ${ACTION_TYPES.join(', ')}`, raw.type);
  for (const field of ALL_ACTION_FIELDS) {
    if (raw[field] !== undefined && !fields.includes(field)) {
      throw refuse([field], `Not allowed for a ${type} action`, raw[field], 'extra_forbidden');
    }
  }
  for (const field of fields) {
    if (raw[field] === undefined && !OPTIONAL_FIELDS.has(field))
      throw refuse([field], 'Field required', raw, 'missing');
  }
  switch (type) {
    case 'send_text':
    case 'add_note': {
      const text = raw.text as string;
      const max = type === 'send_text' ? 4096 : 10_000;
      if (text.length === 0 || text.length > max) throw refuse(['text'], `1 to ${max} characters`, text);
      return { type, text };
    }
    case 'add_labels': {
      const labels = raw.labels as string[];
      if (labels.length === 0 || labels.length > MAX_LABELS) {
        throw refuse(['labels'], `1 to ${MAX_LABELS} labels`, labels);
      }
      const seen = new Set<string>();
      labels.forEach((label, index) => {
        if (label.length === 0 || label.length > 50 || label.trim() !== label) {
          throw refuse(['labels', index], 'A label is 1 to 50 characters without surrounding spaces', label);
        }
        if (seen.has(label.toLowerCase())) throw refuse(['labels', index], 'Labels are unique ignoring case', label);
        seen.add(label.toLowerCase());
      });
      return { type, labels };
    }
    case 'assign':
      return { type, assignee: checkAssignee(raw.assignee, [...loc, 'assignee'], references) };
    case 'assign_team': {
      const teamId = raw.team_id as string | null;
      if (teamId !== null) references.teams.push({ id: teamId, loc: [...loc, 'team_id'] });
      return { type, team_id: teamId };
    }
    case 'set_status': {
      const status = raw.status as (typeof CONVERSATION_STATUSES)[number];
      if (!(CONVERSATION_STATUSES as readonly string[]).includes(status)) {
        throw refuse(['status'], `One of ${CONVERSATION_STATUSES.join(', ')}`, raw.status);
      }
      if (raw.snoozed_until === undefined) return { type, status };
      // decisions §19: only with `snoozed`, in the future, at most 90 days ahead.
      const until = Date.parse(raw.snoozed_until);
      if (status !== 'snoozed') throw refuse(['snoozed_until'], 'Only with status "snoozed"', raw.snoozed_until);
      if (!(until > now.getTime() && until - now.getTime() <= SNOOZE_MAX_MS)) {
        throw refuse(['snoozed_until'], 'In the future, at most 90 days ahead', raw.snoozed_until);
      }
      return { type, status, snoozed_until: new Date(until).toISOString() };
    }
    case 'set_priority': {
      const priority = raw.priority as (typeof PRIORITIES)[number];
      if (!(PRIORITIES as readonly string[]).includes(priority)) {
        throw refuse(['priority'], `One of ${PRIORITIES.join(', ')}`, raw.priority);
      }
      return { type, priority };
    }
  }
}

/** decisions §19's assignee: null, `{type: "user", id}` or `{type: "ai"}`. */
function checkAssignee(raw: unknown, loc: (string | number)[], references: RuleReferences): Assignee {
  if (raw === null) return null;
  const value = raw as { type?: unknown; id?: unknown };
  const keys = typeof raw === 'object' && !Array.isArray(raw) ? Object.keys(value) : undefined;
  if (keys && value.type === 'ai' && keys.length === 1) return { type: 'ai' };
  if (keys && value.type === 'user' && keys.length === 2 && typeof value.id === 'string' && value.id.length > 0) {
    references.users.push({ id: value.id, loc: [...loc, 'id'] });
    return { type: 'user', id: value.id };
  }
  throw validationError(loc, 'null, {"type": "user", "id"} or {"type": "ai"}', 'value_error', { input: raw });
}
