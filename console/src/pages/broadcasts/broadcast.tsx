// A broadcast's page (decisions §17, flow 4): live counts and progress, its recipients filtered by status with the
// failure reasons, cancel and retry failures. Counts move through the event stream (broadcast.* invalidates).
import type { BroadcastRecipient } from '@crm-messaging/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Button, Label, Link, ProgressBar } from 'react-aria-components';
import { useNavigate, useParams } from 'react-router';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { ConfirmButton } from '../../ui/confirm.tsx';
import { type ColumnDef, DataTable } from '../../ui/data-table.tsx';
import { showError } from '../../ui/errors.ts';
import { SelectInput } from '../../ui/fields.tsx';
import { FormError } from '../../ui/form.tsx';
import { Page } from '../../ui/page.tsx';
import { useTime } from '../../ui/session.tsx';
import { QueryView } from '../../ui/states.tsx';

const STATUSES = ['received', 'sending', 'sent', 'delivered', 'read', 'failed'];

export function BroadcastPage() {
  const { broadcastId = '' } = useParams();
  const navigate = useNavigate();
  const time = useTime();
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<string>('any');
  const broadcast = useQuery({
    queryKey: keys.broadcasts.detail(broadcastId),
    queryFn: () => api.broadcasts.get(broadcastId),
    // Until the stream says it finished, a slow poll keeps the counts moving even without events.
    refetchInterval: (query) => (query.state.data?.status === 'in_progress' ? 5_000 : false),
  });
  const recipientsQuery = status === 'any' ? { limit: 50 } : { limit: 50, status: [status] };
  const recipients = useQuery({
    queryKey: keys.broadcasts.recipients(broadcastId, recipientsQuery),
    queryFn: () => api.broadcasts.recipients(broadcastId, recipientsQuery),
  });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: keys.broadcasts.all });
  const cancel = useMutation({ mutationFn: () => api.broadcasts.cancel(broadcastId), onSuccess: refresh });
  const retry = useMutation({
    mutationFn: () => api.broadcasts.retry(broadcastId),
    onSuccess: (created) => {
      refresh();
      navigate(`/broadcasts/${created.id}`);
    },
  });
  const columns: ColumnDef<BroadcastRecipient>[] = [
    { id: 'phone', name: 'Phone', isRowHeader: true, render: (r) => r.phone },
    {
      id: 'status',
      name: 'Status',
      render: (r) => <span className={`badge ${r.status === 'failed' ? 'badge-failed' : ''}`}>{r.status}</span>,
    },
    { id: 'error', name: 'Reason', render: (r) => r.error ?? '—' },
    { id: 'delivered', name: 'Delivered', render: (r) => time(r.delivered_at) },
    { id: 'read', name: 'Read', render: (r) => time(r.read_at) },
  ];
  const error = cancel.error ?? retry.error;

  return (
    <Page title={broadcast.data ? `Broadcast ${broadcast.data.template_name}` : 'Broadcast'}>
      <QueryView query={broadcast}>
        {(data) => (
          <>
            <div className="card">
              <p>
                <span className="badge">{data.status.replaceAll('_', ' ')}</span> · created {time(data.created_at)}
                {data.retry_of ? (
                  <>
                    {' '}
                    · retries <Link href={`/broadcasts/${data.retry_of}`}>an earlier broadcast</Link>
                  </>
                ) : null}
              </p>
              <ProgressBar className="field" value={data.sent + data.failed} maxValue={Math.max(1, data.requested)}>
                {({ valueText }) => (
                  <>
                    <Label>Progress</Label>
                    <progress
                      className="progress"
                      value={data.sent + data.failed}
                      max={Math.max(1, data.requested)}
                      aria-hidden="true"
                    />
                    <span>{valueText}</span>
                  </>
                )}
              </ProgressBar>
              <dl className="fields" aria-live="polite">
                <dt>Recipients</dt>
                <dd>{data.requested}</dd>
                <dt>Sent</dt>
                <dd>{data.sent}</dd>
                <dt>Failed</dt>
                <dd>{data.failed}</dd>
                <dt>Pending</dt>
                <dd>{data.pending}</dd>
              </dl>
              <FormError message={error ? showError(error).message : undefined} />
              <div className="actions">
                <ConfirmButton
                  label="Cancel broadcast"
                  title="Cancel this broadcast?"
                  confirmLabel="Cancel broadcast"
                  isDisabled={data.status !== 'in_progress' || cancel.isPending}
                  onConfirm={() => cancel.mutate()}
                >
                  Recipients not reached yet will not get the message.
                </ConfirmButton>
                <Button onPress={() => retry.mutate()} isDisabled={data.failed === 0 || retry.isPending}>
                  Retry failures
                </Button>
              </div>
            </div>
            <h2>Recipients</h2>
            <div className="filters">
              <SelectInput
                label="Status"
                name="status"
                value={status}
                onChange={(value) => setStatus(value ?? 'any')}
                options={[{ id: 'any', label: 'Any status' }, ...STATUSES.map((s) => ({ id: s, label: s }))]}
              />
            </div>
            <QueryView query={recipients}>
              {(page) => (
                <>
                  <p>
                    {page.total_count} {page.total_count === 1 ? 'recipient' : 'recipients'}
                  </p>
                  <DataTable
                    label="Recipients"
                    columns={columns}
                    items={page.items}
                    rowKey={(r) => `${r.contact_id}:${r.phone}`}
                    empty="No recipient with this status."
                  />
                </>
              )}
            </QueryView>
          </>
        )}
      </QueryView>
    </Page>
  );
}
