// Settings → Teams (decisions §19, admins; D275): the organization's teams with their members, auto-assignment and
// each member's limit; created and edited in one form (the API's 409 duplicate and 422s at their fields), deleted
// after a confirmation (their conversations keep no team).
import type { ConsoleUser as Person } from '@crm-messaging/sdk/console';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { Button, Switch } from 'react-aria-components';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { ConfirmButton } from '../../ui/confirm.tsx';
import { type ColumnDef, DataTable } from '../../ui/data-table.tsx';
import { showError } from '../../ui/errors.ts';
import { CheckboxesInput, TextInput } from '../../ui/fields.tsx';
import { ApiForm, FormError, useApiForm } from '../../ui/form.tsx';
import { Page } from '../../ui/page.tsx';
import { QueryView } from '../../ui/states.tsx';
import { SettingsNav } from './settings-nav.tsx';
import type { Team } from './team-api.ts';

const personName = (person: Person) => person.name ?? person.email;

export function TeamsPage() {
  const queryClient = useQueryClient();
  const list = useQuery({ queryKey: keys.teams.list(), queryFn: () => api.teams.list() });
  const people = useQuery({ queryKey: keys.users.list(), queryFn: () => api.console.users.list() });
  /** The team being edited; null: the form creates a new one. */
  const [editing, setEditing] = useState<Team | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  // A new key after each save empties the form for the next one.
  const [saves, setSaves] = useState(0);
  const formRef = useRef<HTMLElement>(null);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: keys.teams.all });
  const remove = useMutation({
    mutationFn: (team: Team) => api.teams.delete(team.id),
    onSuccess: (_data, team) => {
      if (editing?.id === team.id) setEditing(null);
      setNotice(`Team ${team.name} deleted.`);
      refresh();
    },
  });
  const byId = new Map((people.data?.items ?? []).map((person: Person) => [person.id, person]));

  const columns: ColumnDef<Team>[] = [
    { id: 'name', name: 'Team', isRowHeader: true, render: (team) => team.name },
    {
      id: 'members',
      name: 'Members',
      render: (team) =>
        team.member_ids.length === 0
          ? 'No members'
          : // By name, as a person looks for someone (the API lists them in id order).
            team.member_ids
              .map((id) => (byId.has(id) ? personName(byId.get(id) as Person) : id))
              .sort((a, b) => a.localeCompare(b))
              .join(', '),
    },
    { id: 'auto', name: 'Auto-assign', render: (team) => (team.auto_assign ? 'On' : 'Off') },
    { id: 'limit', name: 'Open per member', render: (team) => String(team.max_open_per_member) },
    {
      id: 'actions',
      name: 'Actions',
      render: (team) => (
        <span className="actions">
          <Button
            aria-label={`Edit ${team.name}`}
            onPress={() => {
              setNotice(null);
              setEditing(team);
              // The form takes focus so that a keyboard user lands where the change is made.
              requestAnimationFrame(() => formRef.current?.querySelector('input')?.focus());
            }}
          >
            Edit
          </Button>
          <ConfirmButton
            label={`Delete ${team.name}`}
            title={`Delete the team ${team.name}?`}
            confirmLabel="Delete team"
            onConfirm={() => remove.mutate(team)}
          >
            Its conversations stay where they are, without a team. Its members keep their conversations.
          </ConfirmButton>
        </span>
      ),
    },
  ];

  return (
    <Page title="Teams">
      <SettingsNav />
      <section className="card" aria-labelledby="teams-title">
        <h2 id="teams-title">Teams</h2>
        <p className="muted">
          A team's conversations can be given out by themselves: to the available member with the fewest open
          conversations under the limit, the one given one longest ago first.
        </p>
        {notice ? <p role="status">{notice}</p> : null}
        <FormError message={remove.error ? showError(remove.error).message : undefined} />
        <QueryView query={list}>
          {(data) => (
            <DataTable
              label="Teams"
              columns={columns}
              items={data.items}
              rowKey={(team) => team.id}
              empty="No teams yet."
            />
          )}
        </QueryView>
      </section>
      <section className="card" aria-labelledby="team-form-title" ref={formRef}>
        <h2 id="team-form-title">{editing ? `Edit ${editing.name}` : 'New team'}</h2>
        <QueryView query={people}>
          {(data) => (
            <TeamForm
              key={`${editing?.id ?? 'new'}-${saves}`}
              team={editing}
              people={data.items}
              onSaved={(team, created) => {
                setEditing(null);
                setSaves((count) => count + 1);
                setNotice(created ? `Team ${team.name} created.` : `Team ${team.name} saved.`);
                refresh();
              }}
              onCancel={() => setEditing(null)}
            />
          )}
        </QueryView>
      </section>
    </Page>
  );
}

function TeamForm({
  team,
  people,
  onSaved,
  onCancel,
}: {
  team: Team | null;
  people: Person[];
  onSaved: (team: Team, created: boolean) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState(team?.name ?? '');
  const [members, setMembers] = useState<string[]>(team?.member_ids ?? []);
  const [autoAssign, setAutoAssign] = useState(team?.auto_assign ?? false);
  const [limit, setLimit] = useState(String(team?.max_open_per_member ?? 20));
  const save = useApiForm({
    mutationFn: () => {
      // The limit as typed: text that is not a number goes as null, for the server to refuse at its field.
      const body = { name, member_ids: members, auto_assign: autoAssign, max_open_per_member: Number(limit) };
      return team ? api.teams.update(team.id, body) : api.teams.create(body);
    },
    onSuccess: (saved) => onSaved(saved, team === null),
  });
  return (
    <ApiForm
      form={save}
      labelledBy="team-form-title"
      submit={team ? 'Save team' : 'Create team'}
      onSubmit={() => save.mutate(undefined)}
      actions={team ? <Button onPress={onCancel}>Cancel</Button> : null}
    >
      <TextInput label="Name" name="name" isRequired value={name} onChange={setName} />
      <CheckboxesInput
        label="Members"
        name="member_ids"
        value={members}
        onChange={setMembers}
        options={people.map((person) => ({
          id: person.id,
          label: (
            <>
              {personName(person)}
              {person.available === false ? <span className="muted"> (away)</span> : null}
            </>
          ),
        }))}
      />
      <Switch isSelected={autoAssign} onChange={setAutoAssign}>
        <span className="switch-indicator" aria-hidden="true" /> Assign conversations automatically
      </Switch>
      <TextInput
        label="Open conversations per member"
        name="max_open_per_member"
        type="number"
        description="From 1 to 1,000: auto-assignment gives no more open or pending conversations to a member."
        value={limit}
        onChange={setLimit}
      />
    </ApiForm>
  );
}
