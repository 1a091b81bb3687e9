// A rule's page (decisions §20): its form (name, event, conditions, actions, stop, active), the API's 422s at their
// rows as sentences, and its last runs with each action's outcome and reason in words. A new rule is the same form.
import type { BodyOf, ResponseOf } from '@crm-messaging/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, Switch } from 'react-aria-components';
import { useNavigate, useParams } from 'react-router';
import { api } from '../../../api/client.ts';
import { ConfirmButton } from '../../../ui/confirm.tsx';
import { showError } from '../../../ui/errors.ts';
import { SelectInput, TextInput } from '../../../ui/fields.tsx';
import { ApiForm, FormError, useApiForm } from '../../../ui/form.tsx';
import { useSession, useTime } from '../../../ui/session.tsx';
import { QueryView } from '../../../ui/states.tsx';
import { automationKeys } from './automation-api.ts';
import { type Action, type ActionRow, ActionRows, actionOf, actionRowOf, blankAction } from './rule-actions.tsx';
import { type Condition, type ConditionRow, ConditionRows, conditionOf, conditionRowOf } from './rule-conditions.tsx';
import { EVENT_LABELS, runActionWords } from './rule-words.ts';
import { SettingsFrame, sentence } from './settings-frame.tsx';

type Rule = ResponseOf<'getAutomationRule'>;
type RuleInput = BodyOf<'createAutomationRule'>;

export function NewRulePage() {
  return (
    <SettingsFrame title="New rule">
      <RuleForm rule={undefined} />
    </SettingsFrame>
  );
}

export function RulePage() {
  const { ruleId = '' } = useParams();
  const rule = useQuery({
    queryKey: automationKeys.rules.detail(ruleId),
    queryFn: () => api.automationRules.get(ruleId),
  });
  return (
    <SettingsFrame title={rule.data ? `Rule: ${rule.data.name}` : 'Rule'}>
      <QueryView query={rule}>
        {(data) => (
          <>
            <RuleForm key={data.id} rule={data} />
            <RuleRuns ruleId={data.id} />
          </>
        )}
      </QueryView>
    </SettingsFrame>
  );
}

function RuleForm({ rule }: { rule: Rule | undefined }) {
  const { organization } = useSession();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [name, setName] = useState(rule?.name ?? '');
  const [event, setEvent] = useState<string>(rule?.event ?? 'message.received');
  const [conditions, setConditions] = useState<ConditionRow[]>(() =>
    (rule?.conditions ?? []).map((condition, id) => conditionRowOf(condition as Condition, id)),
  );
  const [actions, setActions] = useState<ActionRow[]>(() =>
    rule
      ? rule.actions.map((action, id) => actionRowOf(action as Action, id, organization.timezone))
      : [blankAction(0)],
  );
  const [stop, setStop] = useState(rule?.stop ?? false);
  const [active, setActive] = useState(rule?.active ?? true);
  const [notice, setNotice] = useState('');
  const save = useApiForm({
    mutationFn: (body: RuleInput) =>
      rule ? api.automationRules.update(rule.id, body) : api.automationRules.create(body),
    onMutate: () => setNotice(''),
    onSuccess: (saved) => {
      void queryClient.invalidateQueries({ queryKey: automationKeys.rules.all });
      if (rule) setNotice('Rule saved.');
      else navigate(`/settings/rules/${saved.id}`);
    },
  });
  const remove = useMutation({
    mutationFn: () => api.automationRules.delete(rule?.id ?? ''),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: automationKeys.rules.all });
      navigate('/settings/rules');
    },
  });
  const at = (field: string) => sentence(save.fieldError(field));
  const under = (field: string) => sentence(save.fieldErrorUnder(field));
  return (
    <>
      <ApiForm
        form={{ ...save, fieldError: at }}
        className="card form-wide"
        label={rule ? 'Rule' : 'New rule'}
        submit={rule ? 'Save rule' : 'Create rule'}
        onSubmit={() =>
          save.mutate({
            name,
            event: event as RuleInput['event'],
            conditions: conditions.map(conditionOf) as RuleInput['conditions'],
            actions: actions.map((row) => actionOf(row, organization.timezone)) as RuleInput['actions'],
            stop,
            active,
          })
        }
        actions={
          <>
            <Link href="/settings/rules" className="button">
              Back to the rules
            </Link>
            {rule ? (
              <ConfirmButton
                label="Delete rule"
                title="Delete this rule?"
                confirmLabel="Delete rule"
                onConfirm={() => remove.mutate()}
              >
                Its runs are deleted with it.
              </ConfirmButton>
            ) : null}
          </>
        }
      >
        <TextInput label="Rule name" name="name" isRequired value={name} onChange={setName} />
        <SelectInput
          label="When"
          name="event"
          value={event}
          onChange={(value) => setEvent(value ?? 'message.received')}
          options={Object.entries(EVENT_LABELS).map(([id, label]) => ({ id, label }))}
        />
        <ConditionRows rows={conditions} onChange={setConditions} errorAt={at} />
        <ActionRows rows={actions} onChange={setActions} errorAt={at} errorUnder={under} />
        <Switch isSelected={stop} onChange={setStop}>
          <span className="switch-indicator" aria-hidden="true" /> Stop: no later rule runs when this one matches
        </Switch>
        <Switch isSelected={active} onChange={setActive}>
          <span className="switch-indicator" aria-hidden="true" /> Active
        </Switch>
      </ApiForm>
      <FormError message={remove.error ? showError(remove.error).message : undefined} />
      {notice ? <p role="status">{notice}</p> : null}
    </>
  );
}

/** The rule's last runs (GET /v1/automation-rules/{id}/runs, newest first): what each action did, in words. */
function RuleRuns({ ruleId }: { ruleId: string }) {
  const time = useTime();
  const runs = useQuery({
    queryKey: automationKeys.rules.runs(ruleId),
    queryFn: () => api.automationRules.runs(ruleId, { limit: 20 }),
  });
  return (
    <section className="card" aria-labelledby="runs-title">
      <h2 id="runs-title">Last runs</h2>
      <QueryView query={runs} isEmpty={(page) => page.items.length === 0} empty="This rule has not run yet.">
        {(page) => (
          <ul className="settings-list" aria-label="Runs">
            {page.items.map((run) => (
              <li key={run.id}>
                <span>
                  <Link href={`/inbox/${run.conversation_id}`}>{time(run.created_at)}</Link>:{' '}
                  {run.actions.map(runActionWords).join('; ')}
                </span>
              </li>
            ))}
          </ul>
        )}
      </QueryView>
    </section>
  );
}
