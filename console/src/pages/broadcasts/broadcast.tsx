// A broadcast's page (decisions §16, §17 flow 4): live counts and progress, its recipients filtered by status with
// the failure reasons, and the actions its status allows: pause (scheduled, preparing, in progress), resume (paused),
// cancel after a confirmation (any of those four), retry failures (when some failed). Counts move through the event
// stream (broadcast.* invalidates), with a slow poll while it is not finished. Times in the organization's timezone.
import type { BroadcastRecipient } from '@crm-messaging/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Button, Label, Link, ProgressBar } from 'react-aria-components';
import { useNavigate, useParams } from 'react-router';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { ConfirmButton } from '../../ui/confirm.tsx';
import { type ColumnDef, DataTable } from '../../ui/data-table.tsx';
import { failureReason, showError } from '../../ui/errors.ts';
import { SelectInput } from '../../ui/fields.tsx';
import { FormError } from '../../ui/form.tsx';
import { Page } from '../../ui/page.tsx';
import { useSession, useTime } from '../../ui/session.tsx';
import { QueryView } from '../../ui/states.tsx';
import { contactLabel } from '../inbox/contact-name.tsx';

const STATUSES = ['received', 'sending', 'sent', 'delivered', 'read', 'failed'];
/** The statuses a broadcast leaves by itself or by an action (decisions §16); the others are final. */
const RUNNING = ['scheduled', 'preparing', 'in_progress'];
const CANCELLABLE = [...RUNNING, 'paused'];

const REASONS: Record<string, string> = {
  requested: 'Paused by a person.',
  template_not_sendable: 'Its template is no longer approved: nothing more is sent until it is.',
};
const CANCEL_REASONS: Record<string, string> = {
  template_not_sendable: 'Cancelled by the service: its template was no longer approved at the start.',
};

function audienceSummary(audience: Record<string, unknown>): string {
  const parts = Object.entries(audience).map(
    ([key, value]) => `${key.replaceAll('_', ' ')}: ${Array.isArray(value) ? value.join(', ') : String(value)}`,
  );
  return parts.length === 0 ? 'Every contact' : parts.join('; ');
}

export function BroadcastPage() {
  const { broadcastId = '' } = useParams();
  const navigate = useNavigate();
  const time = useTime();
  const { organization } = useSession();
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<string>('any');
  const broadcast = useQuery({
    queryKey: keys.broadcasts.detail(broadcastId),
    queryFn: () => api.broadcasts.get(broadcastId),
    // Until the stream says it finished, a slow poll keeps the counts moving even without events.
    refetchInterval: (query) => (CANCELLABLE.includes(query.state.data?.status ?? '') ? 5_000 : false),
  });
  const recipientsQuery = status === 'any' ? { limit: 50 } : { limit: 50, status: [status] };
  const recipients = useQuery({
    queryKey: keys.broadcasts.recipients(broadcastId, recipientsQuery),
    queryFn: () => api.broadcasts.recipients(broadcastId, recipientsQuery),
  });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: keys.broadcasts.all });
  const cancel = useMutation({ mutationFn: () => api.broadcasts.cancel(broadcastId), onSuccess: refresh });
  const pause = useMutation({ mutationFn: () => api.broadcasts.pause(broadcastId), onSuccess: refresh });
  const resume = useMutation({ mutationFn: () => api.broadcasts.resume(broadcastId), onSuccess: refresh });
  const retry = useMutation({
    mutationFn: () => api.broadcasts.retry(broadcastId),
    onSuccess: (created) => {
      refresh();
      navigate(`/broadcasts/${created.id}`);
    },
  });
  const columns: ColumnDef<BroadcastRecipient>[] = [
    {
      id: 'contact',
      name: 'Contact',
      isRowHeader: true,
      // The contact comes with the list (D242): its name links to its page, no request per row.
      render: (r) => <Link href={`/contacts/${r.contact_id}`}>{contactLabel(r.contact)}</Link>,
    },
    { id: 'phone', name: 'Phone', render: (r) => r.phone },
    {
      id: 'status',
      name: 'Status',
      render: (r) => <span className={`badge ${r.status === 'failed' ? 'badge-failed' : ''}`}>{r.status}</span>,
    },
    { id: 'error', name: 'Reason', render: (r) => (r.error ? failureReason(r.error) : '—') },
    { id: 'delivered', name: 'Delivered', render: (r) => time(r.delivered_at) },
    { id: 'read', name: 'Read', render: (r) => time(r.read_at) },
  ];
  const error = cancel.error ?? retry.error ?? pause.error ?? resume.error;
  const busy = cancel.isPending || retry.isPending || pause.isPending || resume.isPending;

  return (
    <Page title={broadcast.data ? `Broadcast ${broadcast.data.name ?? broadcast.data.template_name}` : 'Broadcast'}>
      <QueryView query={broadcast}>
        {(data) => (
          <>
            <div className="card">
              <p>
                <span className="badge">{data.status.replaceAll('_', ' ')}</span> · {data.template_name} (
                {data.template_language}) · created {time(data.created_at)}
                {data.retry_of ? (
                  <>
                    {' '}
                    · retries <Link href={`/broadcasts/${data.retry_of}`}>an earlier broadcast</Link>
                  </>
                ) : null}
              </p>
              {data.status === 'scheduled' && data.send_at ? (
                <p className="notice">
                  Starts {time(data.send_at)} ({organization.timezone}). It can be paused or cancelled until then.
                </p>
              ) : null}
              {data.status === 'paused' ? (
                <p className="notice">{REASONS[data.status_reason ?? 'requested'] ?? REASONS.requested}</p>
              ) : null}
              {data.status === 'cancelled' && data.status_reason && CANCEL_REASONS[data.status_reason] ? (
                <p className="notice">{CANCEL_REASONS[data.status_reason]}</p>
              ) : null}
              {data.status === 'stopped_low_balance' ? (
                <p className="notice">Stopped: the messaging balance ran out. The rest is still pending.</p>
              ) : null}
              {data.held_until && RUNNING.includes(data.status) ? (
                <p className="notice">
                  Paced by the 24-hour messaging limit: the next messages go out from {time(data.held_until)}.
                </p>
              ) : null}
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
                <dd>
                  {data.requested}
                  {data.status === 'preparing' ? ' (still adding)' : ''}
                </dd>
                <dt>Sent</dt>
                <dd>{data.sent}</dd>
                <dt>Failed</dt>
                <dd>{data.failed}</dd>
                <dt>Pending</dt>
                <dd>{data.pending}</dd>
                {data.audience ? (
                  <>
                    <dt>Audience</dt>
                    <dd>{audienceSummary(data.audience)}</dd>
                  </>
                ) : null}
                {data.send_at ? (
                  <>
                    <dt>Scheduled for</dt>
                    <dd>{time(data.send_at)}</dd>
                  </>
                ) : null}
                {data.started_at ? (
                  <>
                    <dt>Started</dt>
                    <dd>{time(data.started_at)}</dd>
                  </>
                ) : null}
              </dl>
              <FormError message={error ? showError(error).message : undefined} />
              <div className="actions">
                {RUNNING.includes(data.status) ? (
                  <Button onPress={() => pause.mutate()} isDisabled={busy}>
                    Pause broadcast
                  </Button>
                ) : null}
                {data.status === 'paused' ? (
                  <Button className="primary" onPress={() => resume.mutate()} isDisabled={busy}>
                    Resume broadcast
                  </Button>
                ) : null}
                {CANCELLABLE.includes(data.status) ? (
                  <ConfirmButton
                    label="Cancel broadcast"
                    title="Cancel this broadcast?"
                    confirmLabel="Cancel broadcast"
                    isDisabled={busy}
                    onConfirm={() => cancel.mutate()}
                  >
                    {data.status === 'scheduled'
                      ? 'It will not start: no contact will get the message.'
                      : 'Recipients not reached yet will not get the message. This cannot be undone.'}
                  </ConfirmButton>
                ) : null}
                {data.failed > 0 ? (
                  <Button onPress={() => retry.mutate()} isDisabled={busy}>
                    Retry failures
                  </Button>
                ) : null}
                {!CANCELLABLE.includes(data.status) && data.failed === 0 ? (
                  <p className="muted">This broadcast is {data.status.replaceAll('_', ' ')}: nothing left to do.</p>
                ) : null}
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
