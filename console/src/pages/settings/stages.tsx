// Funnel stages: the list in order, reordered with the keyboard or the mouse, and a new stage.
import type { FunnelStage } from '@crm-messaging/sdk';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { showError } from '../../ui/errors.ts';
import { TextInput } from '../../ui/fields.tsx';
import { ApiForm, FormError, useApiForm } from '../../ui/form.tsx';
import { useFunnelStages } from '../../ui/lookups.ts';
import { MoveButtons, moved } from '../../ui/reorder.tsx';
import { QueryView } from '../../ui/states.tsx';

export function StagesSection() {
  const queryClient = useQueryClient();
  const stages = useFunnelStages();
  const [name, setName] = useState('');
  const refresh = () => void queryClient.invalidateQueries({ queryKey: keys.funnelStages.all });
  const create = useApiForm({
    mutationFn: () => api.funnelStages.create({ name }),
    onSuccess: () => {
      setName('');
      refresh();
    },
  });
  const reorder = useMutation({
    mutationFn: (items: FunnelStage[]) =>
      api.funnelStages.reorder({ items: items.map((s, order_idx) => ({ stage_id: s.id, order_idx })) }),
    onSuccess: refresh,
  });
  return (
    <section className="card" aria-labelledby="stages-title">
      <h2 id="stages-title">Funnel stages</h2>
      <FormError message={reorder.error ? showError(reorder.error).message : undefined} />
      <QueryView query={stages}>
        {(list) => (
          <ol className="settings-list">
            {list.items.map((stage, index) => (
              <li key={stage.id}>
                <span>
                  <strong>{stage.name}</strong> <code>{stage.key}</code>
                  {stage.is_initial ? ' · initial' : ''}
                </span>
                <MoveButtons
                  name={stage.name}
                  index={index}
                  count={list.items.length}
                  isDisabled={reorder.isPending}
                  onMove={(delta) => reorder.mutate(moved(list.items, index, delta))}
                />
              </li>
            ))}
          </ol>
        )}
      </QueryView>
      <ApiForm form={create} inline label="New stage" submit="Add stage" onSubmit={() => create.mutate(undefined)}>
        <TextInput
          label="Stage name"
          name="name"
          isRequired
          value={name}
          onChange={setName}
          error={create.fieldError('name') ?? create.fieldError('key')}
        />
      </ApiForm>
    </section>
  );
}
