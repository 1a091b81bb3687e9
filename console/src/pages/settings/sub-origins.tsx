// Sub-origins: named sources of contacts inside an origin.
import type { SubOriginInput } from '@crm-messaging/sdk';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Button, Form } from 'react-aria-components';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { SelectInput, TextInput } from '../../ui/fields.tsx';
import { FormError, useApiForm } from '../../ui/form.tsx';
import { ORIGINS, useSubOrigins } from '../../ui/lookups.ts';
import { QueryView } from '../../ui/states.tsx';

export function SubOriginsSection() {
  const queryClient = useQueryClient();
  const subOrigins = useSubOrigins();
  const [label, setLabel] = useState('');
  const [key, setKey] = useState('');
  const [origin, setOrigin] = useState('WEB');
  const create = useApiForm({
    mutationFn: (body: SubOriginInput) => api.subOrigins.create(body),
    onSuccess: () => {
      setLabel('');
      setKey('');
      void queryClient.invalidateQueries({ queryKey: keys.subOrigins.all });
    },
  });
  return (
    <section className="card" aria-labelledby="sub-origins-title">
      <h2 id="sub-origins-title">Sub-origins</h2>
      <QueryView query={subOrigins} isEmpty={(list) => list.items.length === 0} empty="No sub-origins yet.">
        {(list) => (
          <ul className="settings-list">
            {list.items.map((item) => (
              <li key={item.id}>
                <span>
                  <strong>{item.label}</strong> <code>{item.key}</code> · {item.origin}
                </span>
              </li>
            ))}
          </ul>
        )}
      </QueryView>
      <Form
        validationBehavior="aria"
        className="form"
        aria-label="New sub-origin"
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate({ label, key, origin: origin as SubOriginInput['origin'] });
        }}
      >
        <FormError message={create.shown.message} />
        <TextInput
          label="Sub-origin label"
          name="label"
          isRequired
          value={label}
          onChange={setLabel}
          error={create.fieldError('label')}
        />
        <TextInput
          label="Sub-origin key"
          name="key"
          isRequired
          value={key}
          onChange={setKey}
          error={create.fieldError('key')}
        />
        <SelectInput
          label="Origin"
          name="origin"
          value={origin}
          onChange={(v) => setOrigin(v ?? 'WEB')}
          options={ORIGINS.map((id) => ({ id, label: id }))}
          error={create.fieldError('origin')}
        />
        <Button type="submit" className="primary" isDisabled={create.isPending}>
          Add sub-origin
        </Button>
      </Form>
    </section>
  );
}
