// Templates (decisions §17, flow 5): the list with review status and category; status changes arrive live
// (template.status_updated invalidates the list).
import type { Template } from '@crm-messaging/sdk';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-aria-components';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { type ColumnDef, DataTable } from '../../ui/data-table.tsx';
import { Page } from '../../ui/page.tsx';
import { useTime } from '../../ui/session.tsx';
import { QueryView } from '../../ui/states.tsx';

export function TemplatesPage() {
  const time = useTime();
  const templates = useQuery({
    queryKey: keys.templates.list({ limit: 100 }),
    queryFn: () => api.templates.list({ limit: 100 }),
  });
  const columns: ColumnDef<Template>[] = [
    { id: 'name', name: 'Name', isRowHeader: true, render: (t) => t.name },
    { id: 'language', name: 'Language', render: (t) => t.language },
    { id: 'category', name: 'Category', render: (t) => t.category },
    {
      id: 'status',
      name: 'Review status',
      render: (t) => (
        <span
          className={`badge ${t.status === 'REJECTED' ? 'badge-failed' : t.status === 'APPROVED' ? 'badge-open' : ''}`}
        >
          {t.status}
          {t.rejected_reason ? ` (${t.rejected_reason})` : ''}
        </span>
      ),
    },
    { id: 'updated', name: 'Updated', render: (t) => time(t.updated_at) },
  ];
  return (
    <Page
      title="Templates"
      actions={
        <Link className="button primary" href="/templates/new">
          New template
        </Link>
      }
    >
      <QueryView query={templates}>
        {(page) => (
          <DataTable
            label="Templates"
            columns={columns}
            items={page.items}
            rowKey={(t) => t.id}
            empty="No templates yet. Create one: the platform reviews it before it can be sent."
          />
        )}
      </QueryView>
    </Page>
  );
}
