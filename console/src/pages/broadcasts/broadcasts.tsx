// Broadcasts (decisions §17, flow 4): the list with status and counts, newest first.
import type { Broadcast } from '@crm-messaging/sdk';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-aria-components';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { type ColumnDef, DataTable } from '../../ui/data-table.tsx';
import { Page } from '../../ui/page.tsx';
import { useTime } from '../../ui/session.tsx';
import { QueryView } from '../../ui/states.tsx';

export function BroadcastsPage() {
  const time = useTime();
  const broadcasts = useQuery({
    queryKey: keys.broadcasts.list({ limit: 50 }),
    queryFn: () => api.broadcasts.list({ limit: 50 }),
  });
  const columns: ColumnDef<Broadcast>[] = [
    {
      id: 'name',
      name: 'Broadcast',
      isRowHeader: true,
      render: (b) => b.name ?? b.template_name,
    },
    { id: 'template', name: 'Template', render: (b) => `${b.template_name} (${b.template_language})` },
    { id: 'status', name: 'Status', render: (b) => <span className="badge">{b.status.replaceAll('_', ' ')}</span> },
    { id: 'requested', name: 'Recipients', render: (b) => b.requested },
    { id: 'sent', name: 'Sent', render: (b) => b.sent },
    { id: 'failed', name: 'Failed', render: (b) => b.failed },
    { id: 'pending', name: 'Pending', render: (b) => b.pending },
    { id: 'created', name: 'Created', render: (b) => time(b.created_at) },
    { id: 'send_at', name: 'Starts', render: (b) => (b.send_at ? time(b.send_at) : '—') },
  ];
  return (
    <Page
      title="Broadcasts"
      actions={
        <Link className="button primary" href="/broadcasts/new">
          New broadcast
        </Link>
      }
    >
      <QueryView query={broadcasts}>
        {(page) => (
          <DataTable
            label="Broadcasts"
            columns={columns}
            items={page.items}
            rowKey={(b) => b.id}
            href={(b) => `/broadcasts/${b.id}`}
            empty="No broadcasts yet. Start one with New broadcast, or send a template through the API."
          />
        )}
      </QueryView>
    </Page>
  );
}
