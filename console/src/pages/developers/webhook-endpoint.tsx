// A webhook endpoint's page: enable or disable, rotate the secret (shown once), send a test ping, and the
// deliveries log with attempts and a retry button.
import type { ResponseOf } from '@crm-messaging/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Button, Switch } from 'react-aria-components';
import { useParams } from 'react-router';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { ConfirmButton } from '../../ui/confirm.tsx';
import { type ColumnDef, DataTable } from '../../ui/data-table.tsx';
import { showError } from '../../ui/errors.ts';
import { FormError } from '../../ui/form.tsx';
import { Page } from '../../ui/page.tsx';
import { ShownOnce } from '../../ui/secret.tsx';
import { useTime } from '../../ui/session.tsx';
import { QueryView } from '../../ui/states.tsx';

type Delivery = ResponseOf<'listWebhookDeliveries'>['items'][number];

/** How long the log follows a queued ping or retry closely. */
const FOLLOW_MS = 30_000;

export function WebhookEndpointPage() {
  const { endpointId = '' } = useParams();
  const time = useTime();
  const queryClient = useQueryClient();
  const [secret, setSecret] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const endpoint = useQuery({
    queryKey: keys.webhookEndpoints.detail(endpointId),
    queryFn: () => api.webhookEndpoints.get(endpointId),
  });
  // When a ping or a retry was queued (its attempt comes a moment later), and while a delivery is pending.
  const [queuedAt, setQueuedAt] = useState<number | null>(null);
  const deliveries = useQuery({
    queryKey: keys.webhookEndpoints.deliveries(endpointId),
    queryFn: () => api.webhookEndpoints.deliveries(endpointId, { limit: 50 }),
    // The log follows a ping or a retry as it is attempted (D242): every second for 30 s after it, then every 5 s
    // while a delivery is pending; no event announces an attempt.
    refetchInterval: (query) => {
      if (queuedAt !== null && Date.now() - queuedAt < FOLLOW_MS) return 1000;
      return query.state.data?.items.some((delivery) => delivery.status === 'pending') ? 5000 : false;
    },
  });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: keys.webhookEndpoints.all });
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => api.webhookEndpoints.update(endpointId, { enabled }),
    onSuccess: refresh,
  });
  const rotate = useMutation({
    mutationFn: () => api.webhookEndpoints.rotateSecret(endpointId),
    onSuccess: (result) => {
      setSecret(result.secret);
      refresh();
    },
  });
  const ping = useMutation({
    mutationFn: () => api.webhookEndpoints.test(endpointId),
    onSuccess: () => {
      setNotice('Test ping queued: it appears in the deliveries below.');
      setQueuedAt(Date.now());
      refresh();
    },
  });
  const retry = useMutation({
    mutationFn: (deliveryId: string) => api.webhookEndpoints.retryDelivery(endpointId, deliveryId),
    onSuccess: () => {
      setNotice('Delivery queued again.');
      setQueuedAt(Date.now());
      refresh();
    },
  });
  const error = toggle.error ?? rotate.error ?? ping.error ?? retry.error;
  const columns: ColumnDef<Delivery>[] = [
    { id: 'event', name: 'Event', isRowHeader: true, render: (d) => d.event_type },
    {
      id: 'status',
      name: 'Status',
      render: (d) => <span className={`badge ${d.status === 'failed' ? 'badge-failed' : ''}`}>{d.status}</span>,
    },
    { id: 'attempts', name: 'Attempts', render: (d) => d.attempts },
    {
      id: 'response',
      name: 'Last answer',
      render: (d) => d.last_error ?? (d.last_status_code ? `HTTP ${d.last_status_code}` : '—'),
    },
    { id: 'next', name: 'Next attempt', render: (d) => time(d.next_attempt_at) },
    { id: 'created', name: 'Created', render: (d) => time(d.created_at) },
    {
      id: 'actions',
      name: 'Actions',
      render: (d) =>
        d.status === 'failed' ? (
          <Button onPress={() => retry.mutate(d.id)} isDisabled={retry.isPending}>
            Retry delivery {d.event_type}
          </Button>
        ) : null,
    },
  ];
  return (
    <Page title="Webhook endpoint">
      <QueryView query={endpoint}>
        {(data) => (
          <div className="card">
            <p>
              <code>{data.url}</code>
            </p>
            <p className="muted">Events: {data.events.join(', ')}</p>
            {secret ? <ShownOnce label="Signing secret" value={secret} /> : null}
            {notice ? <p role="status">{notice}</p> : null}
            <FormError message={error ? showError(error).message : undefined} />
            <div className="actions">
              <Switch
                isSelected={data.enabled}
                onChange={(value) => toggle.mutate(value)}
                isDisabled={toggle.isPending}
              >
                <span className="switch-indicator" aria-hidden="true" /> Enabled
              </Switch>
              <Button onPress={() => ping.mutate()} isDisabled={ping.isPending}>
                Send test ping
              </Button>
              <ConfirmButton
                label="Rotate secret"
                title="Rotate the signing secret?"
                confirmLabel="Rotate secret"
                onConfirm={() => rotate.mutate()}
              >
                Deliveries are signed with the new secret from now on; update your receiver.
              </ConfirmButton>
            </div>
          </div>
        )}
      </QueryView>
      <h2>Deliveries</h2>
      <QueryView query={deliveries}>
        {(page) => (
          <DataTable
            label="Deliveries"
            columns={columns}
            items={page.items}
            rowKey={(d) => d.id}
            empty="No deliveries yet."
          />
        )}
      </QueryView>
    </Page>
  );
}
