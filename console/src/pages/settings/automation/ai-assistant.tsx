// Settings → AI assistant (decisions §20): enabled, mode, instructions, FAQs, the numbers it serves, the handoff
// team and message, the reply limit and the model provider (its API key write-only: set, replace or remove, never
// shown), and a "try it" box on POST /v1/ai-assistant/test.
import type { BodyOf, ResponseOf } from '@crm-messaging/sdk';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Button, Switch } from 'react-aria-components';
import { api } from '../../../api/client.ts';
import { CheckboxesInput, SelectInput, TextInput } from '../../../ui/fields.tsx';
import { ApiForm, useApiForm } from '../../../ui/form.tsx';
import { usePhones } from '../../../ui/lookups.ts';
import { QueryView } from '../../../ui/states.tsx';
import { automationKeys, teamOptions, useTeams } from './automation-api.ts';
import { type FaqRow, FaqRows } from './faq-rows.tsx';
import { SettingsFrame, sentence } from './settings-frame.tsx';

type Assistant = ResponseOf<'getAiAssistant'>;
type AssistantInput = BodyOf<'putAiAssistant'>;
/** What happens to the stored API key on save (it is never shown). */
type KeyChange = 'keep' | 'set' | 'remove';

const NO_TEAM = 'none';

export function AiAssistantPage() {
  const assistant = useQuery({ queryKey: automationKeys.assistant, queryFn: () => api.aiAssistant.get() });
  return (
    <SettingsFrame title="AI assistant">
      <QueryView query={assistant}>{(data) => <AssistantForm saved={data} />}</QueryView>
      <TryIt />
    </SettingsFrame>
  );
}

function AssistantForm({ saved }: { saved: Assistant }) {
  const queryClient = useQueryClient();
  const phones = usePhones();
  const teams = useTeams();
  const [enabled, setEnabled] = useState(saved.enabled);
  const [mode, setMode] = useState<string>(saved.mode);
  const [instructions, setInstructions] = useState(saved.instructions);
  const [faqs, setFaqs] = useState<FaqRow[]>(() => saved.faqs.map((faq, id) => ({ id, ...faq })));
  const [channelIds, setChannelIds] = useState<string[]>(saved.channel_ids);
  const [handoffTeam, setHandoffTeam] = useState(saved.handoff_team_id ?? NO_TEAM);
  const [handoffMessage, setHandoffMessage] = useState(saved.handoff_message);
  const [maxReplies, setMaxReplies] = useState(String(saved.max_replies_per_conversation));
  const [ownProvider, setOwnProvider] = useState(saved.provider !== null);
  const [baseUrl, setBaseUrl] = useState(saved.provider?.base_url ?? '');
  const [model, setModel] = useState(saved.provider?.model ?? '');
  const [keyChange, setKeyChange] = useState<KeyChange>(saved.provider?.has_api_key ? 'keep' : 'set');
  const [apiKey, setApiKey] = useState('');
  const [notice, setNotice] = useState('');
  const save = useApiForm({
    mutationFn: (body: AssistantInput) => api.aiAssistant.put(body),
    onMutate: () => setNotice(''),
    onSuccess: (data) => {
      queryClient.setQueryData(automationKeys.assistant, data);
      setApiKey('');
      setKeyChange(data.provider?.has_api_key ? 'keep' : 'set');
      setNotice('AI assistant saved.');
    },
  });
  const at = (name: string) => sentence(save.fieldErrorUnder(name));
  const hasKey = saved.provider?.has_api_key === true;

  const provider = (): AssistantInput['provider'] => {
    if (!ownProvider) return null;
    const base = { base_url: baseUrl, model };
    if (keyChange === 'remove') return { ...base, api_key: null };
    if (keyChange === 'set' && apiKey !== '') return { ...base, api_key: apiKey };
    // Left out, the stored key is kept while the address stays the same (decisions §20).
    return base;
  };

  return (
    <>
      <ApiForm
        // Every field shows the first message at it or under it, as a sentence.
        form={{ ...save, fieldError: at, fieldErrorUnder: at }}
        className="card form-wide"
        label="AI assistant settings"
        submit="Save AI assistant"
        onSubmit={() =>
          save.mutate({
            enabled,
            mode: mode as AssistantInput['mode'],
            instructions,
            faqs: faqs.map(({ question, answer }) => ({ question, answer })),
            channel_ids: channelIds,
            handoff_team_id: handoffTeam === NO_TEAM ? null : handoffTeam,
            handoff_message: handoffMessage,
            // A number the API refuses (not 1–50, or not a number) is its 422 at this field.
            max_replies_per_conversation: (maxReplies.trim() === '' ? Number.NaN : Number(maxReplies)) as number,
            provider: provider(),
          })
        }
      >
        <Switch isSelected={enabled} onChange={setEnabled}>
          <span className="switch-indicator" aria-hidden="true" /> Assistant enabled
        </Switch>
        <SelectInput
          label="Mode"
          name="mode"
          value={mode}
          onChange={(value) => setMode(value ?? 'draft')}
          options={[
            { id: 'draft', label: 'Draft: suggests replies to people' },
            { id: 'autonomous', label: 'Autonomous: answers contacts itself' },
          ]}
        />
        <TextInput
          label="Instructions"
          name="instructions"
          multiline
          description="What the model is told about the business (at most 8,000 characters)."
          value={instructions}
          onChange={setInstructions}
        />
        <FaqRows rows={faqs} onChange={setFaqs} />
        <CheckboxesInput
          className="field scopes"
          label="Numbers served (none chosen: all)"
          name="channel_ids"
          value={channelIds}
          onChange={setChannelIds}
          options={(phones.data?.items ?? []).map((phone) => ({
            id: phone.id,
            label: phone.display_name ? `${phone.display_name} ${phone.phone}` : phone.phone,
          }))}
        />
        <SelectInput
          label="Handoff team"
          name="handoff_team_id"
          value={handoffTeam}
          onChange={(value) => setHandoffTeam(value ?? NO_TEAM)}
          options={[{ id: NO_TEAM, label: 'No team' }, ...teamOptions(teams.data?.items)]}
        />
        <TextInput
          label="Handoff message"
          name="handoff_message"
          multiline
          description="Sent to the contact when the assistant hands the conversation to a person."
          value={handoffMessage}
          onChange={setHandoffMessage}
        />
        <TextInput
          label="Most replies per conversation"
          name="max_replies_per_conversation"
          type="number"
          description="From 1 to 50; the next contact message then goes to a person."
          value={maxReplies}
          onChange={setMaxReplies}
        />
        <fieldset className="property-filters">
          <legend>Model provider</legend>
          <Switch isSelected={ownProvider} onChange={setOwnProvider}>
            <span className="switch-indicator" aria-hidden="true" /> Use our own model provider
          </Switch>
          {ownProvider ? (
            <>
              <TextInput
                label="Provider base URL"
                name="provider.base_url"
                type="url"
                description="An OpenAI-compatible API, e.g. https://api.openai.com/v1"
                value={baseUrl}
                onChange={setBaseUrl}
              />
              <TextInput label="Model" name="provider.model" value={model} onChange={setModel} />
              <ProviderKey
                hasKey={hasKey}
                change={keyChange}
                onChange={setKeyChange}
                value={apiKey}
                onValue={setApiKey}
                error={at('provider.api_key')}
              />
            </>
          ) : (
            <p className="muted">The deployment’s model is used (or, without one, answers from the FAQs).</p>
          )}
          {at('provider') && !ownProvider ? <p className="field-error">{at('provider')}</p> : null}
        </fieldset>
      </ApiForm>
      {notice ? <p role="status">{notice}</p> : null}
    </>
  );
}

/** The provider's API key, write-only: "set" when none is stored, else "replace" or "remove"; never shown. */
function ProviderKey({
  hasKey,
  change,
  onChange,
  value,
  onValue,
  error,
}: {
  hasKey: boolean;
  change: KeyChange;
  onChange: (change: KeyChange) => void;
  value: string;
  onValue: (value: string) => void;
  error: string | undefined;
}) {
  const input = (label: string) => (
    <TextInput
      label={label}
      name="provider.api_key"
      type="password"
      autoComplete="off"
      value={value}
      onChange={onValue}
      error={error}
    />
  );
  if (!hasKey) return input('API key (stored sealed, never shown)');
  if (change === 'set')
    return (
      <div className="rows">
        {input('New API key (replaces the stored one)')}
        <Button onPress={() => onChange('keep')}>Keep the stored key</Button>
      </div>
    );
  return (
    <div className="field">
      <p>{change === 'remove' ? 'The stored API key will be removed on save.' : 'An API key is set.'}</p>
      <div className="actions">
        <Button onPress={() => onChange('set')}>Replace API key</Button>
        {change === 'remove' ? (
          <Button onPress={() => onChange('keep')}>Keep API key</Button>
        ) : (
          <Button onPress={() => onChange('remove')}>Remove API key</Button>
        )}
      </div>
      {error ? <p className="field-error">{error}</p> : null}
    </div>
  );
}

/** What the assistant would answer a contact's message (POST /v1/ai-assistant/test); sends nothing. */
function TryIt() {
  const [text, setText] = useState('');
  const test = useApiForm({ mutationFn: (body: { text: string }) => api.aiAssistant.test(body) });
  return (
    <section className="card" aria-labelledby="try-it-title">
      <h2 id="try-it-title">Try it</h2>
      <p className="muted">Write a contact’s message to see what the assistant would answer (nothing is sent).</p>
      <ApiForm
        form={{ ...test, fieldError: (name) => sentence(test.fieldError(name)) }}
        label="Try the assistant"
        submit="Try it"
        onSubmit={() => test.mutate({ text })}
      >
        <TextInput label="A contact’s message" name="text" multiline value={text} onChange={setText} />
      </ApiForm>
      <div role="status" className="try-answer">
        {test.data ? (
          <dl className="fields" aria-label="The assistant’s answer">
            <dt>Action</dt>
            <dd>{ACTIONS[test.data.action] ?? test.data.action}</dd>
            <dt>Text</dt>
            <dd>{test.data.text ?? '(none)'}</dd>
            <dt>Reason</dt>
            <dd>{test.data.reason ?? '(none)'}</dd>
          </dl>
        ) : null}
      </div>
    </section>
  );
}

const ACTIONS: Record<string, string> = {
  reply: 'Reply',
  handoff: 'Hand off to a person',
  resolve: 'Resolve',
};
