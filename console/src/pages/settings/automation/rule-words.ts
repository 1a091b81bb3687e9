// decisions §20 in words: a rule's events, condition fields and operators, actions, and what a run's action did.
import type { Option } from '../../../ui/fields.tsx';

export const EVENT_LABELS: Record<string, string> = {
  'message.received': 'A contact’s message arrives',
  'conversation.created': 'A conversation starts',
};

export const PROPERTY_FIELD = 'contact.properties.';

/** The condition fields of decisions §20 with the operators each takes (the API refuses others at their row). */
export const CONDITION_FIELDS: { id: string; label: string; operators: string[] }[] = [
  { id: 'message.text', label: 'Message text', operators: ['contains', 'equals', 'starts_with', 'matches'] },
  { id: 'message.type', label: 'Message type', operators: ['equals'] },
  { id: 'within_business_hours', label: 'Within business hours', operators: ['equals'] },
  { id: 'contact.country', label: 'Contact country', operators: ['equals', 'contains'] },
  { id: 'contact.funnel_stage_id', label: 'Contact funnel stage', operators: ['equals', 'contains'] },
  { id: PROPERTY_FIELD, label: 'Contact property', operators: ['equals', 'contains'] },
  { id: 'conversation.status', label: 'Conversation status', operators: ['equals'] },
  { id: 'conversation.labels', label: 'Conversation labels', operators: ['contains'] },
  { id: 'conversation.assignee', label: 'Conversation assignee', operators: ['equals'] },
];

export const OPERATOR_LABELS: Record<string, string> = {
  equals: 'is',
  contains: 'contains',
  starts_with: 'starts with',
  matches: 'matches the pattern',
};

export const ACTION_TYPES: Option[] = [
  { id: 'send_text', label: 'Send a text' },
  { id: 'add_labels', label: 'Add labels' },
  { id: 'assign', label: 'Assign to' },
  { id: 'assign_team', label: 'Give to a team' },
  { id: 'set_status', label: 'Set the status' },
  { id: 'set_priority', label: 'Set the priority' },
  { id: 'add_note', label: 'Add a private note' },
];

export const STATUSES: Option[] = [
  { id: 'open', label: 'Open' },
  { id: 'pending', label: 'Pending' },
  { id: 'snoozed', label: 'Snoozed' },
  { id: 'resolved', label: 'Resolved' },
];

export const PRIORITIES: Option[] = [
  { id: 'none', label: 'None' },
  { id: 'low', label: 'Low' },
  { id: 'medium', label: 'Medium' },
  { id: 'high', label: 'High' },
  { id: 'urgent', label: 'Urgent' },
];

const OUTCOMES: Record<string, string> = { done: 'done', skipped: 'skipped', failed: 'failed' };

const REASONS: Record<string, string> = {
  window_closed: 'the 24-hour window was closed',
  opted_out: 'the contact opted out',
  channel_unavailable: 'the conversation’s number is not connected',
  label_limit: 'the conversation would have more than 20 labels',
  ai_disabled: 'the AI assistant is disabled',
  unknown_user: 'the user no longer exists',
  unknown_team: 'the team no longer exists',
};

/** One action of a run in words: `Send a text: skipped (the contact opted out)`. */
export function runActionWords(action: { type: string; outcome: string; reason?: string }): string {
  const type = ACTION_TYPES.find((option) => option.id === action.type)?.label ?? action.type;
  const reason = action.reason ? ` (${REASONS[action.reason] ?? action.reason.replaceAll('_', ' ')})` : '';
  return `${type}: ${OUTCOMES[action.outcome] ?? action.outcome}${reason}`;
}
