// Custom properties: create (with options for the choice kinds), archive and restore, reorder.
import {
  keyFromName,
  OPTION_KINDS,
  type Property,
  type PropertyInput,
  type PropertyKind,
  propertyKinds,
} from '@crm-messaging/sdk';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Button } from 'react-aria-components';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { showError } from '../../ui/errors.ts';
import { SelectInput, TextInput } from '../../ui/fields.tsx';
import { ApiForm, FormError, useApiForm } from '../../ui/form.tsx';
import { useProperties } from '../../ui/lookups.ts';
import { MoveButtons, moved } from '../../ui/reorder.tsx';
import { QueryView } from '../../ui/states.tsx';

/** "Gold, Silver" -> [{key: "gold", label: "Gold"}, …] by the server's own rule (D328); the server checks them. */
function optionsOf(text: string): { key: string; label: string }[] {
  return text
    .split(',')
    .map((label) => label.trim())
    .filter(Boolean)
    .map((label) => ({ key: keyFromName(label, 'option'), label }));
}

export function PropertiesSection() {
  const queryClient = useQueryClient();
  const properties = useProperties();
  const [label, setLabel] = useState('');
  const [key, setKey] = useState('');
  // The key follows the label (the server's own slug rule, decisions §6) until the person edits it by hand (D242).
  const [keyEdited, setKeyEdited] = useState(false);
  const changeLabel = (value: string) => {
    setLabel(value);
    if (!keyEdited) setKey(value.trim() ? keyFromName(value, 'property') : '');
  };
  const [kind, setKind] = useState<PropertyKind>('TEXT');
  const [options, setOptions] = useState('');
  const [currency, setCurrency] = useState('');
  const refresh = () => void queryClient.invalidateQueries({ queryKey: keys.properties.all });
  const create = useApiForm({
    mutationFn: (body: PropertyInput) => api.properties.create(body),
    onSuccess: () => {
      setLabel('');
      setKey('');
      setKeyEdited(false);
      setOptions('');
      refresh();
    },
  });
  const archive = useMutation({
    mutationFn: ({ id, archived }: { id: string; archived: boolean }) => api.properties.update(id, { archived }),
    onSuccess: refresh,
  });
  const reorder = useMutation({
    mutationFn: (items: Property[]) =>
      api.properties.reorder({ items: items.map((p, order_idx) => ({ property_id: p.id, order_idx })) }),
    onSuccess: refresh,
  });
  const error = archive.error ?? reorder.error;
  return (
    <section className="card" aria-labelledby="properties-title">
      <h2 id="properties-title">Custom properties</h2>
      <FormError message={error ? showError(error).message : undefined} />
      <QueryView query={properties} isEmpty={(list) => list.items.length === 0} empty="No custom properties yet.">
        {(list) => (
          <ol className="settings-list">
            {list.items.map((property, index) => (
              <li key={property.id}>
                <span>
                  <strong>{property.label}</strong> <code>{property.key}</code> · {property.kind}
                  {property.options.length > 0 ? ` · ${property.options.map((o) => o.label).join(', ')}` : ''}
                  {property.archived_at ? ' · archived' : ''}
                </span>
                <span className="actions">
                  <MoveButtons
                    name={property.label}
                    index={index}
                    count={list.items.length}
                    isDisabled={reorder.isPending}
                    onMove={(delta) => reorder.mutate(moved(list.items, index, delta))}
                  />
                  <Button onPress={() => archive.mutate({ id: property.id, archived: !property.archived_at })}>
                    {property.archived_at ? `Restore ${property.label}` : `Archive ${property.label}`}
                  </Button>
                </span>
              </li>
            ))}
          </ol>
        )}
      </QueryView>
      <h3>New property</h3>
      <ApiForm
        form={create}
        label="New property"
        submit="Create property"
        onSubmit={() =>
          create.mutate({
            label,
            key,
            kind,
            ...(OPTION_KINDS.includes(kind) ? { options: optionsOf(options) } : {}),
            ...(kind === 'MONEY' && currency ? { currency } : {}),
          })
        }
      >
        <TextInput label="Label" name="label" isRequired value={label} onChange={changeLabel} />
        <TextInput
          label="Key"
          name="key"
          isRequired
          description="Lower case letters, digits and _."
          value={key}
          onChange={(value) => {
            setKey(value);
            setKeyEdited(value !== '');
          }}
        />
        <SelectInput
          label="Kind"
          name="kind"
          value={kind}
          onChange={(v) => setKind((v ?? 'TEXT') as PropertyKind)}
          options={propertyKinds.map((id) => ({ id, label: id }))}
        />
        {OPTION_KINDS.includes(kind) ? (
          <TextInput
            label="Options"
            name="options"
            description="Separated by commas."
            value={options}
            onChange={setOptions}
            error={create.fieldErrorUnder('options')}
          />
        ) : null}
        {kind === 'MONEY' ? (
          <TextInput label="Currency" name="currency" value={currency} onChange={setCurrency} />
        ) : null}
      </ApiForm>
    </section>
  );
}
