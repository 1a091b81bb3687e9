// Create and edit a contact (decisions §17, flow 3): the fields, the funnel stage and the custom properties edited
// by kind. The API's 422 issues show at their field (`loc` ["body","email"], ["body","properties","plan"]).
import type { Contact, ContactPatch, Property } from '@crm-messaging/sdk';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-aria-components';
import { useNavigate, useParams } from 'react-router';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { CheckboxesInput, SelectInput, TextInput } from '../../ui/fields.tsx';
import { ApiForm, useApiForm } from '../../ui/form.tsx';
import { useFunnelStages, useProperties } from '../../ui/lookups.ts';
import { Page } from '../../ui/page.tsx';
import { QueryView } from '../../ui/states.tsx';
import { patchValue, readValue } from './property-value.ts';

const FIELDS = [
  ['first_name', 'First name', 'text'],
  ['last_name', 'Last name', 'text'],
  ['email', 'Email', 'email'],
  ['phone', 'Phone', 'tel'],
  ['country', 'Country (2 letters)', 'text'],
  ['city', 'City', 'text'],
] as const;
type FieldName = (typeof FIELDS)[number][0];

export function NewContactPage() {
  return (
    <Page title="New contact">
      <ContactForm />
    </Page>
  );
}

export function EditContactPage() {
  const { contactId = '' } = useParams();
  const contact = useQuery({ queryKey: keys.contacts.detail(contactId), queryFn: () => api.contacts.get(contactId) });
  return (
    <Page title="Edit contact">
      <QueryView query={contact}>{(data) => <ContactForm contact={data} />}</QueryView>
    </Page>
  );
}

function ContactForm({ contact }: { contact?: Contact }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const stages = useFunnelStages();
  const properties = useProperties();
  const [values, setValues] = useState<Record<FieldName, string>>(() => {
    const initial = {} as Record<FieldName, string>;
    for (const [name] of FIELDS) initial[name] = contact?.[name] ?? '';
    return initial;
  });
  const [stage, setStage] = useState<string | null>(contact?.funnel_stage_id ?? null);
  const [custom, setCustom] = useState<Record<string, string>>({});
  const live = (properties.data?.items ?? []).filter((property) => !property.archived_at);
  const current = (property: Property) =>
    custom[property.key] ?? readValue(property, contact?.properties?.[property.key]);

  const form = useApiForm({
    mutationFn: (body: ContactPatch) => (contact ? api.contacts.update(contact.id, body) : api.contacts.create(body)),
    onSuccess: (saved) => {
      queryClient.setQueryData(keys.contacts.detail(saved.id), saved);
      void queryClient.invalidateQueries({ queryKey: keys.contacts.list() });
      navigate(`/contacts/${saved.id}`);
    },
  });

  const submit = () => {
    const body: ContactPatch = {};
    for (const [name] of FIELDS) {
      const value = values[name].trim();
      if (contact ? value !== (contact[name] ?? '') : value) body[name] = value || null;
    }
    if (stage !== (contact?.funnel_stage_id ?? null)) body.funnel_stage_id = stage;
    const changed = Object.keys(custom);
    if (changed.length > 0) {
      body.properties = {};
      for (const property of live.filter((p) => changed.includes(p.key)))
        body.properties[property.key] = patchValue(
          property,
          custom[property.key]!,
          contact?.properties?.[property.key],
        );
    }
    form.mutate(body);
  };

  return (
    <ApiForm
      form={form}
      submit={contact ? 'Save contact' : 'Create contact'}
      onSubmit={submit}
      actions={
        <Link className="button" href={contact ? `/contacts/${contact.id}` : '/contacts'}>
          Cancel
        </Link>
      }
    >
      {FIELDS.map(([name, label, type]) => (
        <TextInput
          key={name}
          label={label}
          name={name}
          type={type}
          value={values[name]}
          onChange={(value) => setValues((all) => ({ ...all, [name]: value }))}
        />
      ))}
      <SelectInput
        label="Funnel stage"
        name="funnel_stage_id"
        value={stage}
        onChange={setStage}
        placeholder="The initial stage"
        options={(stages.data?.items ?? []).map((item) => ({ id: item.id, label: item.name }))}
      />
      <QueryView query={properties}>
        {() => (
          <>
            {live.map((property) => (
              <PropertyInput
                key={property.id}
                property={property}
                value={current(property)}
                onChange={(value) => setCustom((all) => ({ ...all, [property.key]: value }))}
              />
            ))}
          </>
        )}
      </QueryView>
    </ApiForm>
  );
}

/** One custom property's input, chosen by its kind. */
function PropertyInput({
  property,
  value,
  onChange,
}: {
  property: Property;
  value: string;
  onChange: (value: string) => void;
}) {
  const label =
    property.kind === 'MONEY' && property.currency ? `${property.label} (${property.currency})` : property.label;
  const common = { label, name: `properties.${property.key}`, isRequired: property.required };
  switch (property.kind) {
    case 'RADIO':
    case 'DROPDOWN':
      return (
        <SelectInput
          {...common}
          value={value || null}
          onChange={(key) => onChange(key ?? '')}
          options={property.options.map((option) => ({ id: option.key, label: option.label }))}
        />
      );
    case 'BOOLEAN':
      return (
        <SelectInput
          {...common}
          value={value || null}
          onChange={(key) => onChange(key ?? '')}
          options={[
            { id: 'true', label: 'Yes' },
            { id: 'false', label: 'No' },
          ]}
        />
      );
    case 'MULTI_SELECT':
      return (
        <CheckboxesInput
          {...common}
          value={value ? value.split(',').map((item) => item.trim()) : []}
          onChange={(keys) => onChange(keys.join(', '))}
          options={property.options.map((option) => ({ id: option.key, label: option.label }))}
        />
      );
    case 'DATE':
      return <TextInput {...common} type="date" value={value} onChange={onChange} />;
    case 'NUMBER':
    case 'MONEY':
      return <TextInput {...common} type="number" value={value} onChange={onChange} />;
    case 'TEXTAREA':
      return <TextInput {...common} multiline value={value} onChange={onChange} />;
    case 'EMAIL':
      return <TextInput {...common} type="email" value={value} onChange={onChange} />;
    case 'URL':
      return <TextInput {...common} type="url" value={value} onChange={onChange} />;
    case 'FILE':
      return <TextInput {...common} type="url" description="The file's URL." value={value} onChange={onChange} />;
    case 'MULTI_FILE':
      return <TextInput {...common} description="File URLs, separated by commas." value={value} onChange={onChange} />;
    default:
      return <TextInput {...common} value={value} onChange={onChange} />;
  }
}
