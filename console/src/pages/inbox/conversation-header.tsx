// A conversation's header (decisions §19, D286): its status (and a snooze's end), assignee (people by name, or
// "Unassigned"), team, priority and labels, each changed by PATCH /v1/conversations/{id}: resolve, reopen, snooze
// until a preset (an hour, tomorrow 9:00, next Monday 9:00 in the organization's timezone) or a chosen time, assign,
// set the team and the priority, add and remove labels. The API is the judge: its 409 and 422 are shown as sentences.
import type { BodyOf, Conversation } from '@crm-messaging/sdk';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Button, Menu, MenuItem, MenuTrigger, Popover } from 'react-aria-components';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { SelectInput, TextInput } from '../../ui/fields.tsx';
import { FormError, useApiForm } from '../../ui/form.tsx';
import { useSession, useTime } from '../../ui/session.tsx';
import { utcToZonedInput, zonedToUtc } from '../../ui/time.ts';
import { personName, usePeople, useTeams } from './people.ts';
import { PRIORITIES, PRIORITY_LABELS, type Priority, STATUS_LABELS, type Status } from './views.ts';

type Change = BodyOf<'updateConversation'>;

const DAY = 86_400_000;

/**
 * The snooze presets' instants: an hour from now, tomorrow 9:00 and next Monday 9:00 on the organization's clocks
 * (a Monday's "next Monday" is a week ahead).
 */
export function snoozePresets(now: Date, timeZone: string): { id: string; label: string; until: string }[] {
  const today = utcToZonedInput(now, timeZone).slice(0, 10);
  const day = (offset: number) => new Date(Date.parse(`${today}T00:00:00Z`) + offset * DAY).toISOString().slice(0, 10);
  const weekday = new Date(`${today}T00:00:00Z`).getUTCDay();
  const toMonday = (8 - weekday) % 7 || 7;
  return [
    { id: 'hour', label: 'For an hour', until: new Date(now.getTime() + 3_600_000).toISOString() },
    { id: 'tomorrow', label: 'Until tomorrow 9:00', until: zonedToUtc(`${day(1)}T09:00`, timeZone)! },
    { id: 'monday', label: 'Until next Monday 9:00', until: zonedToUtc(`${day(toMonday)}T09:00`, timeZone)! },
  ];
}

function Labels({
  labels,
  onChange,
  error,
  isPending,
}: {
  labels: string[];
  onChange: (labels: string[]) => void;
  error: string | undefined;
  isPending: boolean;
}) {
  const [text, setText] = useState('');
  return (
    <div className="conversation-labels">
      <ul aria-label="Labels" className="label-list">
        {labels.length === 0 ? <li className="muted">No labels</li> : null}
        {labels.map((label) => (
          <li key={label} className="label-chip">
            {label}{' '}
            <Button
              aria-label={`Remove label ${label}`}
              isDisabled={isPending}
              onPress={() => onChange(labels.filter((other) => other !== label))}
            >
              ×
            </Button>
          </li>
        ))}
      </ul>
      <form
        className="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          if (!text.trim()) return;
          onChange([...labels, text.trim()]);
          setText('');
        }}
      >
        <TextInput label="Add a label" name="label" value={text} onChange={setText} error={error} />
        <Button type="submit" isDisabled={isPending || !text.trim()}>
          Add label
        </Button>
      </form>
    </div>
  );
}

export function ConversationHeader({ conversation }: { conversation: Conversation }) {
  const queryClient = useQueryClient();
  const { organization } = useSession();
  const time = useTime();
  const { people } = usePeople();
  const { teams } = useTeams();
  const [chosenTime, setChosenTime] = useState<string | null>(null);
  const form = useApiForm({
    mutationFn: (change: Change) => api.conversations.update(conversation.id, change),
    onSuccess: (updated) => {
      queryClient.setQueryData(keys.conversations.detail(conversation.id), updated);
      setChosenTime(null);
      void queryClient.invalidateQueries({ queryKey: keys.conversations.list() });
    },
  });
  const change = (body: Change) => form.mutate(body);
  const status = conversation.status as Status;
  const assignee = conversation.assignee;
  const assigneeValue = assignee === null ? 'none' : assignee.type === 'ai' ? 'ai' : assignee.id;
  const assigneeOptions = [
    { id: 'none', label: 'Unassigned' },
    ...people.map((person) => ({ id: person.id, label: personName(person) })),
    ...(assignee?.type === 'ai' ? [{ id: 'ai', label: 'Assistant' }] : []),
    // An assignee no longer listed (removed meanwhile) is still shown as who it is.
    ...(assignee?.type === 'user' && !people.some((person) => person.id === assignee.id)
      ? [{ id: assignee.id, label: 'A former user' }]
      : []),
  ];
  const snooze = (until: string) => change({ status: 'snoozed', snoozed_until: until });
  // A refusal at a field (a 422 at `snoozed_until`, `assignee.id`, `labels`) read as a sentence by the form too.
  const fieldMessage = Object.entries(form.shown.fields).find(([field]) => !field.startsWith('labels'))?.[1];
  return (
    <section className="conversation-header" aria-label="Conversation details">
      <p className="conversation-status">
        <span className={`badge badge-status-${status}`}>{STATUS_LABELS[status] ?? status}</span>
        {status === 'snoozed' ? (
          <span className="muted">
            {' '}
            {conversation.snoozed_until
              ? `until ${time(conversation.snoozed_until)}`
              : 'until the contact writes again'}
          </span>
        ) : null}
      </p>
      <FormError message={form.shown.message ?? fieldMessage} />
      <div className="conversation-actions">
        {status === 'resolved' ? (
          <Button isDisabled={form.isPending} onPress={() => change({ status: 'open' })}>
            Reopen
          </Button>
        ) : (
          <Button className="primary" isDisabled={form.isPending} onPress={() => change({ status: 'resolved' })}>
            Resolve
          </Button>
        )}
        {status === 'snoozed' ? (
          <Button isDisabled={form.isPending} onPress={() => change({ status: 'open' })}>
            Wake up now
          </Button>
        ) : null}
        <MenuTrigger>
          <Button isDisabled={form.isPending}>
            Snooze <span aria-hidden="true">▾</span>
          </Button>
          <Popover className="popover">
            <Menu
              className="menu"
              aria-label="Snooze"
              onAction={(key) => {
                if (key === 'chosen') {
                  setChosenTime(utcToZonedInput(new Date(Date.now() + 3_600_000), organization.timezone));
                  return;
                }
                const preset = snoozePresets(new Date(), organization.timezone).find((p) => p.id === key);
                if (preset) snooze(preset.until);
              }}
            >
              {snoozePresets(new Date(), organization.timezone).map((preset) => (
                <MenuItem key={preset.id} id={preset.id}>
                  {preset.label}
                </MenuItem>
              ))}
              <MenuItem id="chosen">Until a chosen time…</MenuItem>
            </Menu>
          </Popover>
        </MenuTrigger>
      </div>
      {chosenTime !== null ? (
        <form
          className="inline-form"
          aria-label="Snooze until a chosen time"
          onSubmit={(event) => {
            event.preventDefault();
            const until = zonedToUtc(chosenTime, organization.timezone);
            if (until) snooze(until);
          }}
        >
          <TextInput
            label={`Snooze until (${organization.timezone})`}
            name="snoozed_until"
            type="datetime-local"
            value={chosenTime}
            onChange={setChosenTime}
            error={form.fieldError('snoozed_until')}
          />
          <Button type="submit" isDisabled={form.isPending}>
            Snooze until then
          </Button>
          <Button onPress={() => setChosenTime(null)}>Cancel</Button>
        </form>
      ) : null}
      <div className="conversation-fields">
        <SelectInput
          label="Assignee"
          name="assignee"
          value={assigneeValue}
          options={assigneeOptions}
          onChange={(value) => {
            if (!value || value === assigneeValue) return;
            change({
              assignee: value === 'none' ? null : value === 'ai' ? { type: 'ai' } : { type: 'user', id: value },
            });
          }}
        />
        <SelectInput
          label="Team"
          name="team_id"
          value={conversation.team_id ?? 'none'}
          options={[{ id: 'none', label: 'No team' }, ...teams.map((team) => ({ id: team.id, label: team.name }))]}
          onChange={(value) => {
            if (!value || value === (conversation.team_id ?? 'none')) return;
            change({ team_id: value === 'none' ? null : value });
          }}
        />
        <SelectInput
          label="Priority"
          name="priority"
          value={conversation.priority}
          options={PRIORITIES.map((id) => ({ id, label: PRIORITY_LABELS[id] }))}
          onChange={(value) => {
            if (value && value !== conversation.priority) change({ priority: value as Priority });
          }}
        />
      </div>
      <Labels
        labels={conversation.labels}
        onChange={(labels) => change({ labels })}
        error={form.fieldErrorUnder('labels')}
        isPending={form.isPending}
      />
    </section>
  );
}
