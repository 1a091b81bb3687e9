// Webhook endpoints: create (the signing secret shown once), the list with state, each linking to its page.
import type { ResponseOf } from '@crm-messaging/sdk';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { type ColumnDef, DataTable } from '../../ui/data-table.tsx';
import { TextInput } from '../../ui/fields.tsx';
import { ApiForm, useApiForm } from '../../ui/form.tsx';
import { ShownOnce } from '../../ui/secret.tsx';
import { useTime } from '../../ui/session.tsx';
import { QueryView } from '../../ui/states.tsx';

type WebhookEndpoint = ResponseOf<'getWebhookEndpoint'>;

export function WebhookEndpointsSection() {
  const time = useTime();
  const queryClient = useQueryClient();
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const list = useQuery({ queryKey: keys.webhookEndpoints.list(), queryFn: () => api.webhookEndpoints.list() });
  const create = useApiForm({
    mutationFn: () => api.webhookEndpoints.create({ url, events: ['*'] }),
    onSuccess: (endpoint) => {
      setSecret(endpoint.secret);
      setUrl('');
      void queryClient.invalidateQueries({ queryKey: keys.webhookEndpoints.all });
    },
  });
  const columns: ColumnDef<WebhookEndpoint>[] = [
    { id: 'url', name: 'URL', isRowHeader: true, render: (e) => e.url },
    { id: 'events', name: 'Events', render: (e) => e.events.join(', ') },
    {
      id: 'state',
      name: 'State',
      render: (e) => (e.enabled ? 'Enabled' : `Disabled${e.disabled_reason ? ` (${e.disabled_reason})` : ''}`),
    },
    { id: 'created', name: 'Created', render: (e) => time(e.created_at) },
  ];
  return (
    <section className="card" aria-labelledby="webhooks-title">
      <h2 id="webhooks-title">Webhook endpoints</h2>
      {secret ? <ShownOnce label="Signing secret" value={secret} /> : null}
      <ApiForm
        form={create}
        inline
        label="Add a webhook endpoint"
        submit="Add endpoint"
        onSubmit={() => create.mutate(undefined)}
      >
        <TextInput label="Endpoint URL" name="url" type="url" isRequired value={url} onChange={setUrl} />
      </ApiForm>
      <QueryView query={list}>
        {(page) => (
          <DataTable
            label="Webhook endpoints"
            columns={columns}
            items={page.items}
            rowKey={(e) => e.id}
            href={(e) => `/developers/webhooks/${e.id}`}
            empty="No webhook endpoints. Add one to receive the organization's events."
          />
        )}
      </QueryView>
    </section>
  );
}
