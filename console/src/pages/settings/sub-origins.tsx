// Sub-origins: named sources of contacts inside an origin.
import type { ContactOrigin, SubOriginInput } from '@crm-messaging/sdk';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { SelectInput, TextInput } from '../../ui/fields.tsx';
import { ApiForm, useApiForm } from '../../ui/form.tsx';
import { ORIGINS, useSubOrigins } from '../../ui/lookups.ts';
import { QueryView } from '../../ui/states.tsx';

export function SubOriginsSection() {
  const queryClient = useQueryClient();
  const subOrigins = useSubOrigins();
  const [label, setLabel] = useState('');
  const [key, setKey] = useState('');
  const [origin, setOrigin] = useState<ContactOrigin>('WEB');
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
      <ApiForm
        form={create}
        label="New sub-origin"
        submit="Add sub-origin"
        onSubmit={() => create.mutate({ label, key, origin })}
      >
        <TextInput label="Sub-origin label" name="label" isRequired value={label} onChange={setLabel} />
        <TextInput label="Sub-origin key" name="key" isRequired value={key} onChange={setKey} />
        <SelectInput
          label="Origin"
          name="origin"
          value={origin}
          onChange={(v) => setOrigin((v ?? 'WEB') as ContactOrigin)}
          options={ORIGINS.map((id) => ({ id, label: id }))}
        />
      </ApiForm>
    </section>
  );
}
