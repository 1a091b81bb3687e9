// Settings → Rules (decisions §20): the organization's rules in the order they run (by position), each with its
// active switch and moved up or down; a rule's own page holds its form and its last runs.
import type { ResponseOf } from '@crm-messaging/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, Switch } from 'react-aria-components';
import { api } from '../../../api/client.ts';
import { showError } from '../../../ui/errors.ts';
import { FormError } from '../../../ui/form.tsx';
import { MoveButtons, moved } from '../../../ui/reorder.tsx';
import { QueryView } from '../../../ui/states.tsx';
import { automationKeys } from './automation-api.ts';
import { EVENT_LABELS } from './rule-words.ts';
import { SettingsFrame } from './settings-frame.tsx';

type Rule = ResponseOf<'listAutomationRules'>['items'][number];

export function RulesPage() {
  const queryClient = useQueryClient();
  const rules = useQuery({ queryKey: automationKeys.rules.list(), queryFn: () => api.automationRules.list() });
  const refresh = () => queryClient.invalidateQueries({ queryKey: automationKeys.rules.all });
  const activate = useMutation({
    mutationFn: ({ id, active }: { id: string; active: boolean }) => api.automationRules.update(id, { active }),
    onSettled: refresh,
  });
  // The list's order is the rules' positions: a move renumbers the rules whose place changed (0, 1, 2…).
  const move = useMutation({
    mutationFn: async (order: Rule[]) => {
      for (const [position, rule] of order.entries())
        if (rule.position !== position) await api.automationRules.update(rule.id, { position });
    },
    onSettled: refresh,
  });
  const error = activate.error ?? move.error;
  return (
    <SettingsFrame title="Rules">
      <p className="muted">
        A contact’s message runs the rules of its event from the top, each matching rule’s actions in order, until a
        rule that stops.
      </p>
      <div className="actions">
        <Link href="/settings/rules/new" className="button primary">
          New rule
        </Link>
      </div>
      <FormError message={error ? showError(error).message : undefined} />
      <QueryView query={rules} isEmpty={(list) => list.items.length === 0} empty="No rules yet.">
        {(list) => (
          <ol className="rows rule-list card" aria-label="Rules in the order they run">
            {list.items.map((rule, index) => (
              <li key={rule.id}>
                <span>
                  <Link href={`/settings/rules/${rule.id}`}>{rule.name}</Link>{' '}
                  <span className="muted">
                    · {EVENT_LABELS[rule.event] ?? rule.event} · {rule.conditions.length} condition
                    {rule.conditions.length === 1 ? '' : 's'}, {rule.actions.length} action
                    {rule.actions.length === 1 ? '' : 's'}
                    {rule.stop ? ' · stops' : ''}
                  </span>
                </span>
                <span className="actions">
                  <Switch
                    aria-label={`${rule.name} active`}
                    isSelected={rule.active}
                    isDisabled={activate.isPending}
                    onChange={(active) => activate.mutate({ id: rule.id, active })}
                  >
                    <span className="switch-indicator" aria-hidden="true" /> Active
                  </Switch>
                  <MoveButtons
                    name={rule.name}
                    index={index}
                    count={list.items.length}
                    isDisabled={move.isPending}
                    onMove={(delta) => move.mutate(moved(list.items, index, delta))}
                  />
                </span>
              </li>
            ))}
          </ol>
        )}
      </QueryView>
    </SettingsFrame>
  );
}
