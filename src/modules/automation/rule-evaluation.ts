// decisions §20: whether a rule's conditions hold for a contact's message — all must hold; text comparisons ignore
// case; `matches` runs on RE2JS (linear time, D262). Pure: the engine gathers the facts, this only compares.
import { type Condition, compilePattern, PROPERTY_FIELD_PREFIX } from './rule-definitions.ts';

/** What a rule's conditions can ask about. */
export interface RuleFacts {
  message: { text: string | null; type: string };
  withinBusinessHours: boolean;
  contact: { country: string | null; funnelStageId: string | null; properties: Record<string, unknown> };
  conversation: {
    status: string;
    labels: string[];
    /** `unassigned`, `ai` or a user id. */
    assignee: string;
  };
}

/** A contact's property as the API shows it: its value in the slot of its kind (decisions §5). */
interface ShownPropertyValue {
  value_text?: string | null;
  value_number?: number | null;
  value_bool?: boolean | null;
  value_date?: string | null;
  value_json?: unknown;
}

/** A contact's properties as a rule compares them (decisions §20): each value itself, never its stored shape. */
export function propertyFacts(properties: Record<string, ShownPropertyValue>): Record<string, unknown> {
  const facts: Record<string, unknown> = {};
  for (const [key, shown] of Object.entries(properties)) {
    facts[key] = shown.value_text ?? shown.value_number ?? shown.value_bool ?? shown.value_date ?? shown.value_json;
  }
  return facts;
}

const patterns = new Map<string, ReturnType<typeof compilePattern>>();

/** A compiled pattern, kept (at most 1,000) so a busy rule is not compiled for every message. */
function patternOf(source: string) {
  let pattern = patterns.get(source);
  if (!pattern) {
    if (patterns.size >= 1000) patterns.clear();
    pattern = compilePattern(source);
    patterns.set(source, pattern);
  }
  return pattern;
}

/** A property's value as text (a list's items joined), null when unset. */
function propertyText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((item) => propertyText(item) ?? '').join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function compareText(actual: string | null, operator: Condition['operator'], expected: string): boolean {
  if (actual === null) return false;
  const text = actual.toLowerCase();
  const wanted = expected.toLowerCase();
  switch (operator) {
    case 'equals':
      return text === wanted;
    case 'contains':
      return text.includes(wanted);
    case 'starts_with':
      return text.startsWith(wanted);
    case 'matches':
      return patternOf(expected).matcher(actual).find();
  }
}

export function conditionHolds(condition: Condition, facts: RuleFacts): boolean {
  const { field, operator, value } = condition;
  if (field === 'within_business_hours') return facts.withinBusinessHours === value;
  const expected = String(value);
  if (field.startsWith(PROPERTY_FIELD_PREFIX)) {
    const key = field.slice(PROPERTY_FIELD_PREFIX.length);
    return compareText(propertyText(facts.contact.properties[key]), operator, expected);
  }
  switch (field) {
    case 'message.text':
      return compareText(facts.message.text, operator, expected);
    case 'message.type':
      return compareText(facts.message.type, operator, expected);
    case 'contact.country':
      return compareText(facts.contact.country, operator, expected);
    case 'contact.funnel_stage_id':
      return compareText(facts.contact.funnelStageId, operator, expected);
    case 'conversation.status':
      return compareText(facts.conversation.status, operator, expected);
    case 'conversation.labels':
      return facts.conversation.labels.some((label) => label.toLowerCase() === expected.toLowerCase());
    case 'conversation.assignee':
      // A user id compares exactly; `unassigned` and `ai` are words.
      return facts.conversation.assignee === value;
    default:
      return false;
  }
}

export const conditionsHold = (conditions: Condition[], facts: RuleFacts): boolean =>
  conditions.every((condition) => conditionHolds(condition, facts));
