// The inbox's views, status tabs and filters (decisions §19), kept in the address so that a reload or a shared link
// shows the same list (D285). Each one is a filter of GET /v1/conversations: a view is `assignee` (the person's own
// id, `unassigned`) or `team_id`; a tab is `status`; `label`, `priority` and `contact_id` narrow it.
import type { QueryOf } from '@crm-messaging/sdk';

export const STATUSES = ['open', 'pending', 'snoozed', 'resolved'] as const;
export type Status = (typeof STATUSES)[number];
export const PRIORITIES = ['none', 'low', 'medium', 'high', 'urgent'] as const;
export type Priority = (typeof PRIORITIES)[number];

export const STATUS_LABELS: Record<Status, string> = {
  open: 'Open',
  pending: 'Pending',
  snoozed: 'Snoozed',
  resolved: 'Resolved',
};
export const PRIORITY_LABELS: Record<Priority, string> = {
  none: 'No priority',
  low: 'Low',
  medium: 'Medium',
  high: 'High',
  urgent: 'Urgent',
};

/** What the address says: `view` is `mine`, `unassigned`, `all` (the default) or `team:<id>`. */
export interface InboxFilters {
  view: string;
  status: Status;
  label: string;
  priority: Priority | '';
  contact: string;
}

export function filtersOf(params: URLSearchParams): InboxFilters {
  const status = params.get('status') as Status | null;
  const priority = params.get('priority') as Priority | null;
  return {
    view: params.get('view') || 'all',
    status: status && STATUSES.includes(status) ? status : 'open',
    label: params.get('label')?.trim() ?? '',
    priority: priority && PRIORITIES.includes(priority) ? priority : '',
    contact: params.get('contact') ?? '',
  };
}

/** The address's search for `filters`, the defaults left out (so `/inbox` is the Open tab of All). */
export function searchOf(filters: InboxFilters): string {
  const params = new URLSearchParams();
  if (filters.view !== 'all') params.set('view', filters.view);
  if (filters.status !== 'open') params.set('status', filters.status);
  if (filters.label) params.set('label', filters.label);
  if (filters.priority) params.set('priority', filters.priority);
  if (filters.contact) params.set('contact', filters.contact);
  const search = params.toString();
  return search ? `?${search}` : '';
}

/** GET /v1/conversations's query for `filters`, as the person `userId` sees it. */
export function listQueryOf(filters: InboxFilters, userId: string, limit: number): QueryOf<'listConversations'> {
  const query: QueryOf<'listConversations'> = { limit, status: [filters.status] };
  if (filters.view === 'mine') query.assignee = userId;
  else if (filters.view === 'unassigned') query.assignee = 'unassigned';
  else if (filters.view.startsWith('team:')) query.team_id = filters.view.slice('team:'.length);
  if (filters.label) query.label = filters.label;
  if (filters.priority) query.priority = filters.priority;
  if (filters.contact) query.contact_id = filters.contact;
  return query;
}
