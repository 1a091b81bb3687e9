// A rule's actions as rows by type (decisions §20), each with its inputs: a text, labels, a person or the
// assistant, a team, a status or a priority (people and teams from the API); the API's 422 at its row.
import type { components } from '@crm-messaging/sdk';
import { useState } from 'react';
import { Button } from 'react-aria-components';
import { SelectInput, TextInput } from '../../../ui/fields.tsx';
import { utcToZonedInput, zonedToUtc } from '../../../ui/time.ts';
import { teamOptions, userOptions, useTeams, useUsers } from './automation-api.ts';
import { ACTION_TYPES, PRIORITIES, STATUSES } from './rule-words.ts';

export interface ActionRow {
  id: number;
  type: string;
  text: string;
  /** Labels separated by commas. */
  labels: string;
  /** `none`, `ai` or a user's id. */
  assignee: string;
  /** `none` or a team's id. */
  teamId: string;
  status: string;
  /** A snooze's end as the organization's wall clock (`datetime-local`), empty: until the contact writes. */
  snoozedUntil: string;
  priority: string;
}

export type Action = components['schemas']['AutomationActionInput'];

const NONE = 'none';

/** A row as the API's action; a snooze's end is read in the organization's timezone (D116). */
export function actionOf(row: ActionRow, timeZone: string): Action {
  switch (row.type) {
    case 'send_text':
    case 'add_note':
      return { type: row.type, text: row.text };
    case 'add_labels':
      return {
        type: row.type,
        labels: row.labels
          .split(',')
          .map((label) => label.trim())
          .filter((label) => label !== ''),
      };
    case 'assign':
      return {
        type: row.type,
        assignee:
          row.assignee === NONE ? null : row.assignee === 'ai' ? { type: 'ai' } : { type: 'user', id: row.assignee },
      };
    case 'assign_team':
      return { type: row.type, team_id: row.teamId === NONE ? null : row.teamId };
    case 'set_status':
      return row.status === 'snoozed' && row.snoozedUntil
        ? {
            type: row.type,
            status: row.status,
            snoozed_until: zonedToUtc(row.snoozedUntil, timeZone) ?? row.snoozedUntil,
          }
        : { type: row.type, status: row.status };
    case 'set_priority':
      return { type: row.type, priority: row.priority };
    default:
      return { type: row.type };
  }
}

export function actionRowOf(action: Action, id: number, timeZone: string): ActionRow {
  const row = blankAction(id, action.type);
  if (typeof action.text === 'string') row.text = action.text;
  if (Array.isArray(action.labels)) row.labels = action.labels.join(', ');
  if ('assignee' in action) {
    const assignee = action.assignee as { type: string; id?: string } | null;
    row.assignee = assignee === null ? NONE : assignee.type === 'ai' ? 'ai' : (assignee.id ?? NONE);
  }
  if ('team_id' in action) row.teamId = (action.team_id as string | null) ?? NONE;
  if (typeof action.status === 'string') row.status = action.status;
  if (typeof action.snoozed_until === 'string')
    row.snoozedUntil = utcToZonedInput(new Date(action.snoozed_until), timeZone);
  if (typeof action.priority === 'string') row.priority = action.priority;
  return row;
}

export function blankAction(id: number, type = 'send_text'): ActionRow {
  return {
    id,
    type,
    text: '',
    labels: '',
    assignee: NONE,
    teamId: NONE,
    status: 'open',
    snoozedUntil: '',
    priority: 'none',
  };
}

export function ActionRows({
  rows,
  onChange,
  errorAt,
  errorUnder,
}: {
  rows: ActionRow[];
  onChange: (rows: ActionRow[]) => void;
  errorAt: (name: string) => string | undefined;
  errorUnder: (name: string) => string | undefined;
}) {
  const [nextId, setNextId] = useState(rows.length);
  const users = useUsers();
  const teams = useTeams();
  const setRow = (id: number, change: Partial<ActionRow>) =>
    onChange(rows.map((row) => (row.id === id ? { ...row, ...change } : row)));
  return (
    <fieldset className="property-filters">
      <legend>Actions (in order)</legend>
      <ul className="rows">
        {rows.map((row, index) => {
          const n = index + 1;
          const at = `actions.${index}`;
          return (
            <li key={row.id}>
              <SelectInput
                label={`Action ${n}`}
                name={`${at}.type`}
                value={row.type}
                onChange={(type) => setRow(row.id, { type: type ?? 'send_text' })}
                options={ACTION_TYPES}
                error={errorAt(`${at}.type`) ?? errorAt(at)}
              />
              {row.type === 'send_text' || row.type === 'add_note' ? (
                <TextInput
                  label={`Action ${n} text`}
                  name={`${at}.text`}
                  multiline
                  value={row.text}
                  onChange={(text) => setRow(row.id, { text })}
                />
              ) : null}
              {row.type === 'add_labels' ? (
                <TextInput
                  label={`Action ${n} labels`}
                  name={`${at}.labels`}
                  description="Separated by commas."
                  value={row.labels}
                  onChange={(labels) => setRow(row.id, { labels })}
                  error={errorUnder(`${at}.labels`)}
                />
              ) : null}
              {row.type === 'assign' ? (
                <SelectInput
                  label={`Action ${n} assignee`}
                  name={`${at}.assignee`}
                  value={row.assignee}
                  onChange={(assignee) => setRow(row.id, { assignee: assignee ?? NONE })}
                  options={[
                    { id: NONE, label: 'Nobody (unassign)' },
                    { id: 'ai', label: 'The AI assistant' },
                    ...userOptions(users.data?.items),
                  ]}
                  error={errorUnder(`${at}.assignee`)}
                />
              ) : null}
              {row.type === 'assign_team' ? (
                <SelectInput
                  label={`Action ${n} team`}
                  name={`${at}.team_id`}
                  value={row.teamId}
                  onChange={(teamId) => setRow(row.id, { teamId: teamId ?? NONE })}
                  options={[{ id: NONE, label: 'No team' }, ...teamOptions(teams.data?.items)]}
                />
              ) : null}
              {row.type === 'set_status' ? (
                <SelectInput
                  label={`Action ${n} status`}
                  name={`${at}.status`}
                  value={row.status}
                  onChange={(status) => setRow(row.id, { status: status ?? 'open' })}
                  options={STATUSES}
                />
              ) : null}
              {row.type === 'set_status' && row.status === 'snoozed' ? (
                <TextInput
                  label={`Action ${n} snoozed until`}
                  name={`${at}.snoozed_until`}
                  type="datetime-local"
                  description="Optional; empty: until the contact writes."
                  value={row.snoozedUntil}
                  onChange={(snoozedUntil) => setRow(row.id, { snoozedUntil })}
                />
              ) : null}
              {row.type === 'set_priority' ? (
                <SelectInput
                  label={`Action ${n} priority`}
                  name={`${at}.priority`}
                  value={row.priority}
                  onChange={(priority) => setRow(row.id, { priority: priority ?? 'none' })}
                  options={PRIORITIES}
                />
              ) : null}
              <Button aria-label={`Remove action ${n}`} onPress={() => onChange(rows.filter((r) => r.id !== row.id))}>
                Remove
              </Button>
            </li>
          );
        })}
      </ul>
      {errorAt('actions') ? <p className="field-error">{errorAt('actions')}</p> : null}
      <Button
        onPress={() => {
          onChange([...rows, blankAction(nextId)]);
          setNextId((n) => n + 1);
        }}
      >
        Add an action
      </Button>
    </fieldset>
  );
}
