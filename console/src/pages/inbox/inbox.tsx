// Inbox (decisions §17 flow 2, §19): conversations by latest activity with unread counts and whether the window is
// open, in views (Mine, Unassigned, All, each of the person's teams), status tabs (Open by default, Pending, Snoozed,
// Resolved) and filters by label, priority and contact, all kept in the address (D285); the chosen conversation
// beside them; on a phone the list and a conversation are separate views. Keyboard shortcuts (D288): `j`/`k` move
// between conversations, `r` focuses the reply box, `e` resolves, `?` lists them.
import type { Contact } from '@crm-messaging/sdk';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Button, ComboBox, Input, Label, ListBox, ListBoxItem, Popover } from 'react-aria-components';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { useDebounced } from '../../ui/debounce.ts';
import { SelectInput } from '../../ui/fields.tsx';
import { Page } from '../../ui/page.tsx';
import { useSession, useTime } from '../../ui/session.tsx';
import { QueryView } from '../../ui/states.tsx';
import { contactLabel } from './contact-name.tsx';
import { ConversationView } from './conversation.tsx';
import { type InboxConversation, previewOf, windowOpen } from './conversation-types.ts';
import { NotificationsButton, useInboxNotifications } from './notifications.tsx';
import { personName, usePeople, useTeams } from './people.ts';
import { ShortcutsDialog, useInboxShortcuts } from './shortcuts.tsx';
import {
  filtersOf,
  type InboxFilters,
  listQueryOf,
  PRIORITIES,
  PRIORITY_LABELS,
  type Priority,
  STATUS_LABELS,
  STATUSES,
  searchOf,
} from './views.ts';

const PAGE_SIZE = 25;

/** Search by contact: matching contacts as one types (GET /v1/contacts?q=), the chosen one filters the list. */
function ContactFilter({ contactId, onChange }: { contactId: string; onChange: (id: string) => void }) {
  const [text, setText] = useState('');
  const q = useDebounced(text.trim(), 250);
  const matches = useQuery({
    queryKey: keys.contacts.list({ q, limit: 10, purpose: 'inbox-filter' }),
    queryFn: () => api.contacts.list({ q, limit: 10 }),
    enabled: q.length > 0 && !contactId,
  });
  const chosen = useQuery({
    queryKey: keys.contacts.detail(contactId),
    queryFn: () => api.contacts.get(contactId),
    enabled: Boolean(contactId),
  });
  if (contactId)
    return (
      <div className="field inbox-contact-chosen">
        <span className="field-label">Contact</span>
        <span>
          {chosen.data ? contactLabel(chosen.data) : '…'}{' '}
          <Button
            aria-label={`Clear the contact filter${chosen.data ? ` (${contactLabel(chosen.data)})` : ''}`}
            onPress={() => {
              setText('');
              onChange('');
            }}
          >
            Clear
          </Button>
        </span>
      </div>
    );
  return (
    <ComboBox
      className="field"
      inputValue={text}
      onInputChange={setText}
      items={q ? (matches.data?.items ?? []) : []}
      onSelectionChange={(key) => {
        if (key !== null) onChange(String(key));
      }}
      menuTrigger="input"
      allowsEmptyCollection
    >
      <Label>Search by contact</Label>
      <Input placeholder="Name, phone or email" />
      <Popover className="popover">
        <ListBox
          className="listbox"
          renderEmptyState={() => <p className="muted">{matches.isFetching ? 'Searching…' : 'No contact found.'}</p>}
        >
          {(contact: Contact) => (
            <ListBoxItem id={contact.id} textValue={contactLabel(contact)}>
              {contactLabel(contact)}
              {contact.phone ? <span className="muted"> · {contact.phone}</span> : null}
            </ListBoxItem>
          )}
        </ListBox>
      </Popover>
    </ComboBox>
  );
}

function LabelFilter({ value, onChange }: { value: string; onChange: (label: string) => void }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  return (
    <form
      className="field"
      aria-label="Filter by label"
      onSubmit={(event) => {
        event.preventDefault();
        onChange(text.trim());
      }}
    >
      <label className="field-label" htmlFor="inbox-label-filter">
        Label
      </label>
      <input
        id="inbox-label-filter"
        className="react-aria-Input"
        value={text}
        placeholder="For example vip"
        onChange={(event) => setText(event.target.value)}
        onBlur={() => {
          if (text.trim() !== value) onChange(text.trim());
        }}
      />
    </form>
  );
}

export function InboxPage() {
  const { conversationId } = useParams();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const { user } = useSession();
  const time = useTime();
  const filters = filtersOf(params);
  const search = searchOf(filters);
  const { teams } = useTeams();
  const { personOf } = usePeople();
  const mine = teams.filter((team) => team.member_ids.includes(user.id));
  const listQuery = listQueryOf(filters, user.id, PAGE_SIZE);
  const query = useQuery({
    queryKey: keys.conversations.list(listQuery),
    queryFn: () => api.conversations.list(listQuery),
  });
  const change = (next: Partial<InboxFilters>) =>
    navigate(`/inbox${conversationId ? `/${conversationId}` : ''}${searchOf({ ...filters, ...next })}`);
  const items = (query.data?.items ?? []) as InboxConversation[];
  const [shortcutsOpen, setShortcutsOpen] = useState(false);
  useInboxShortcuts({ items, conversationId, search, onHelp: () => setShortcutsOpen(true) });
  useInboxNotifications();

  const views = [
    { id: 'mine', label: 'Mine' },
    { id: 'unassigned', label: 'Unassigned' },
    { id: 'all', label: 'All' },
    ...mine.map((team) => ({ id: `team:${team.id}`, label: team.name })),
  ];
  const to = (next: Partial<InboxFilters>) =>
    `/inbox${conversationId ? `/${conversationId}` : ''}${searchOf({ ...filters, ...next })}`;
  return (
    <Page
      title="Inbox"
      actions={
        <>
          <NotificationsButton />
          <Button onPress={() => setShortcutsOpen(true)}>Keyboard shortcuts</Button>
        </>
      }
    >
      <ShortcutsDialog isOpen={shortcutsOpen} onOpenChange={setShortcutsOpen} />
      <div className={conversationId ? 'inbox inbox-chosen' : 'inbox'}>
        <div className="inbox-side">
          <nav aria-label="Views" className="inbox-views">
            <ul>
              {views.map((view) => (
                <li key={view.id}>
                  <Link to={to({ view: view.id })} aria-current={filters.view === view.id ? 'page' : undefined}>
                    {view.label}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
          <nav aria-label="Status" className="inbox-tabs">
            <ul>
              {STATUSES.map((status) => (
                <li key={status}>
                  <Link to={to({ status })} aria-current={filters.status === status ? 'page' : undefined}>
                    {STATUS_LABELS[status]}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
          <div className="inbox-filters">
            <LabelFilter value={filters.label} onChange={(label) => change({ label })} />
            <SelectInput
              label="Priority"
              name="priority"
              value={filters.priority || 'any'}
              onChange={(value) => change({ priority: value === 'any' || !value ? '' : (value as Priority) })}
              options={[
                { id: 'any', label: 'Any priority' },
                ...PRIORITIES.map((id) => ({ id, label: PRIORITY_LABELS[id] })),
              ]}
            />
            <ContactFilter contactId={filters.contact} onChange={(contact) => change({ contact })} />
          </div>
          <nav aria-label="Conversations">
            <QueryView
              query={query}
              isEmpty={(page) => page.items.length === 0}
              empty={
                filters.view === 'all' && filters.status === 'open' && !filters.label && !filters.priority
                  ? 'No open conversations. They start when a contact writes in or a broadcast reaches them.'
                  : 'No conversations here.'
              }
            >
              {() => (
                <ul className="conversation-list">
                  {items.map((conversation) => {
                    // The conversation on screen is being read: it counts no unread (decisions §19).
                    const unread = conversation.id === conversationId ? 0 : (conversation.unread_count ?? 0);
                    const assignee =
                      conversation.assignee?.type === 'user'
                        ? personOf(conversation.assignee.id)
                        : conversation.assignee?.type === 'ai'
                          ? { name: 'Assistant', email: '' }
                          : undefined;
                    return (
                      <li key={conversation.id}>
                        <Link
                          to={`/inbox/${conversation.id}${search}`}
                          aria-current={conversation.id === conversationId ? 'page' : undefined}
                        >
                          <span>
                            {/* decisions §19: the name and the preview come with the list, no request per row. */}
                            <strong>{contactLabel(conversation.contact)}</strong>
                            <br />
                            {conversation.last_message ? (
                              <span className="conversation-preview">{previewOf(conversation.last_message)}</span>
                            ) : null}
                            <span className="muted">{time(conversation.last_activity_at)}</span>
                            {assignee ? <span className="muted"> · {personName(assignee)}</span> : null}
                          </span>
                          <span>
                            {unread > 0 ? <span className="badge">{unread} unread</span> : null}{' '}
                            {conversation.priority !== 'none' ? (
                              <span className={`badge badge-priority-${conversation.priority}`}>
                                {PRIORITY_LABELS[conversation.priority as Priority]}
                              </span>
                            ) : null}{' '}
                            {conversation.window_expires_at !== undefined ? (
                              <span className={`badge ${windowOpen(conversation) ? 'badge-open' : ''}`}>
                                {windowOpen(conversation) ? 'Window open' : 'Window closed'}
                              </span>
                            ) : null}
                          </span>
                        </Link>
                      </li>
                    );
                  })}
                </ul>
              )}
            </QueryView>
          </nav>
        </div>
        <div>
          {conversationId ? (
            <ConversationView key={conversationId} id={conversationId} backTo={`/inbox${search}`} />
          ) : (
            <p className="state">Choose a conversation to read it.</p>
          )}
        </div>
      </div>
    </Page>
  );
}
