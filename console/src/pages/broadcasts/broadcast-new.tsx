// A new broadcast (decisions §16, §17 flow 4): an approved template, the number it goes out from, an audience built
// from the contact filters with its live count, the template's variables by name, now or at a time entered in the
// organization's timezone, and a name. Sent with an Idempotency-Key that stays the same while the body does, so a
// second press (or a retry after a lost answer) cannot start a second broadcast. The server is the one judge: a 422
// shows at its field, a 409/402 as a sentence; the 202 lands on the broadcast's page.
import type { components } from '@crm-messaging/sdk';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Label, Link, Radio, RadioGroup } from 'react-aria-components';
import { useNavigate } from 'react-router';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { SelectInput, TextInput } from '../../ui/fields.tsx';
import { ApiForm, useApiForm } from '../../ui/form.tsx';
import { useIdempotencyKey } from '../../ui/idempotency.ts';
import { usePhones } from '../../ui/lookups.ts';
import { Page } from '../../ui/page.tsx';
import { useSession, useTime } from '../../ui/session.tsx';
import { Empty, ErrorState, Loading } from '../../ui/states.tsx';
import {
  NO_TEMPLATE_VALUES,
  sendFieldsOf,
  TemplateFields,
  TemplatePreview,
  type TemplateValues,
} from '../../ui/template-fields.tsx';
import { utcToZonedInput, zonedToUtc } from '../../ui/time.ts';
import { AudienceFilters, type AudienceForm, audienceOf, EMPTY_AUDIENCE } from './audience-filters.tsx';

type BroadcastInput = components['schemas']['AudienceBroadcastRequest'];

export function NewBroadcastPage() {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { organization } = useSession();
  const time = useTime();
  const [name, setName] = useState('');
  const [templateId, setTemplateId] = useState<string | null>(null);
  const [channelId, setChannelId] = useState<string | null>(null);
  const [audience, setAudience] = useState<AudienceForm>(EMPTY_AUDIENCE);
  const [values, setValues] = useState<TemplateValues>(NO_TEMPLATE_VALUES);
  const [when, setWhen] = useState<'now' | 'later'>('now');
  const [sendAtLocal, setSendAtLocal] = useState('');
  const idempotency = useIdempotencyKey();

  const templates = useQuery({
    queryKey: keys.templates.list({ status: ['APPROVED'], limit: 200 }),
    queryFn: () => api.templates.list({ status: ['APPROVED'], limit: 200 }),
  });
  const phones = usePhones();
  const template = useQuery({
    queryKey: keys.templates.detail(templateId ?? ''),
    queryFn: () => api.templates.get(templateId!),
    enabled: templateId !== null,
  });
  const requirements = useQuery({
    queryKey: [...keys.templates.detail(templateId ?? ''), 'requirements'],
    queryFn: () => api.templates.sendRequirements(templateId!),
    enabled: templateId !== null,
  });

  const form = useApiForm({
    mutationFn: ({ body, key }: { body: BroadcastInput; key: string }) =>
      api.broadcasts.create(body, { idempotencyKey: key }),
    onSuccess: (created) => {
      void queryClient.invalidateQueries({ queryKey: keys.broadcasts.all });
      navigate(`/broadcasts/${created.id}`);
    },
  });
  const errorAt = (field: string) => form.fieldErrorUnder(`audience.${field}`);
  const sendAt = when === 'later' ? zonedToUtc(sendAtLocal, organization.timezone) : undefined;

  const submit = () => {
    const req = requirements.data;
    const body: BroadcastInput = {
      template_id: templateId ?? '',
      audience: audienceOf(audience) as BroadcastInput['audience'],
    };
    if (name.trim()) body.name = name.trim();
    if (channelId) body.channel_id = channelId;
    Object.assign(body, sendFieldsOf(values, req, organization.timezone));
    // The time as typed, even when it is not a full date and time: the server's 422 says what is wrong with it.
    if (when === 'later') body.send_at = sendAt ?? sendAtLocal;
    form.mutate({ body, key: idempotency.keyFor(body) });
  };

  if (templates.isPending || phones.isPending)
    return (
      <Page title="New broadcast">
        <Loading label="Loading the templates and numbers…" />
      </Page>
    );
  if (templates.isError || phones.isError)
    return (
      <Page title="New broadcast">
        <ErrorState
          error={templates.error ?? phones.error}
          retry={() => {
            void templates.refetch();
            void phones.refetch();
          }}
        />
      </Page>
    );

  const approved = templates.data.items;
  const numbers = phones.data.items;
  const req = requirements.data;
  const now = new Date();

  return (
    <Page title="New broadcast">
      {approved.length === 0 ? (
        <Empty>
          No template is approved yet. <Link href="/templates/new">Create a template</Link> and send it once it is
          approved.
        </Empty>
      ) : (
        <div className="two-columns">
          <ApiForm
            form={form}
            className="form-wide"
            label="New broadcast"
            submit={when === 'later' ? 'Schedule broadcast' : 'Send broadcast'}
            onSubmit={submit}
            actions={
              <Link className="button" href="/broadcasts">
                Cancel
              </Link>
            }
          >
            <TextInput
              label="Name"
              name="name"
              description="For you, up to 200 characters (optional)."
              value={name}
              onChange={setName}
            />
            <SelectInput
              label="Template"
              name="template_id"
              value={templateId}
              onChange={(id) => {
                setTemplateId(id);
                setValues(NO_TEMPLATE_VALUES);
              }}
              placeholder="Choose an approved template"
              options={approved.map((t) => ({ id: t.id, label: `${t.name} (${t.language}, ${t.category})` }))}
            />
            {numbers.length > 1 ? (
              <SelectInput
                label="From number"
                name="channel_id"
                value={channelId}
                onChange={setChannelId}
                placeholder="Choose a number"
                options={numbers.map((p) => ({
                  id: p.id,
                  label: `${p.display_name ?? p.phone} (${p.phone})`,
                }))}
              />
            ) : numbers[0] ? (
              <p>
                From <strong>{numbers[0].display_name ?? numbers[0].phone}</strong> ({numbers[0].phone})
              </p>
            ) : null}

            <AudienceFilters value={audience} onChange={setAudience} errorAt={errorAt} />

            {templateId === null ? null : requirements.isPending ? (
              <Loading label="Reading the template's variables…" />
            ) : requirements.isError ? (
              <ErrorState error={requirements.error} retry={() => void requirements.refetch()} />
            ) : (
              <fieldset className="card">
                <legend>Variables</legend>
                {req ? (
                  <TemplateFields
                    requirements={req}
                    values={values}
                    onChange={setValues}
                    errors={form}
                    describe={(variable) =>
                      variable.resolves_from
                        ? `Filled from each contact's ${variable.resolves_from} where it is set; this value is for the others.`
                        : variable.example
                          ? `The same for every contact. For example: ${variable.example}`
                          : 'The same for every contact.'
                    }
                  />
                ) : null}
              </fieldset>
            )}

            <fieldset className="card">
              <legend>Schedule</legend>
              <RadioGroup className="field" value={when} onChange={(value) => setWhen(value as 'now' | 'later')}>
                <Label>When to send</Label>
                <Radio value="now">Now</Radio>
                <Radio value="later">At a time</Radio>
              </RadioGroup>
              {when === 'later' ? (
                <>
                  <TextInput
                    label={`Send at (${organization.timezone} time)`}
                    name="send_at"
                    type="datetime-local"
                    value={sendAtLocal}
                    onChange={setSendAtLocal}
                    isRequired
                    description={`In the organization's timezone, up to 30 days ahead. It is now ${utcToZonedInput(now, organization.timezone).replace('T', ' ')} there.`}
                  />
                  {sendAt ? (
                    <p aria-live="polite">
                      Starts {time(sendAt)} ({organization.timezone}).
                    </p>
                  ) : null}
                </>
              ) : null}
            </fieldset>
          </ApiForm>
          <section aria-labelledby="preview-title" className="sticky-aside">
            <h2 id="preview-title">Preview</h2>
            <TemplatePreview components={template.data?.components} values={values} />
          </section>
        </div>
      )}
    </Page>
  );
}
