// Contacts (decisions §17, flow 3): the table with search, filters (property filters too), sorts, pages and the total.
// The filters live in the address, so a filtered list is a link that reloads to the same list.
import type { Contact, ContactListQuery } from '@crm-messaging/sdk';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Button, Input, Label, Link, SearchField } from 'react-aria-components';
import { useSearchParams } from 'react-router';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { type ColumnDef, DataTable, type Sort } from '../../ui/data-table.tsx';
import { useDebounced } from '../../ui/debounce.ts';
import { SelectInput, TextInput } from '../../ui/fields.tsx';
import { ORIGINS, useFunnelStages } from '../../ui/lookups.ts';
import { Page } from '../../ui/page.tsx';
import { PropertyFilters, type PropertyRow, propertyFilterOf, propertyRowsOf } from '../../ui/property-filters.tsx';
import { useTime } from '../../ui/session.tsx';
import { QueryView } from '../../ui/states.tsx';
import { contactLabel } from '../inbox/contact-name.tsx';

const PAGE_SIZE = 25;
/** How long typing pauses before the search runs. */
const SEARCH_DEBOUNCE_MS = 300;
type SortKey = NonNullable<ContactListQuery['sort']>;

export function ContactsPage() {
  const [params, setParams] = useSearchParams();
  const [cursors, setCursors] = useState<string[]>([]);
  const stages = useFunnelStages();
  const time = useTime();
  // Rows being built live here; the complete ones (a property chosen) go into the address as `property_filter`.
  const [propertyRows, setPropertyRows] = useState<PropertyRow[]>(() =>
    propertyRowsOf(params.getAll('property_filter')),
  );
  const setPropertyFilters = (rows: PropertyRow[]) => {
    setPropertyRows(rows);
    const next = new URLSearchParams(params);
    next.delete('property_filter');
    for (const filter of propertyFilterOf(rows)) next.append('property_filter', filter);
    setCursors([]);
    setParams(next, { replace: true });
  };
  const stageName = (id: string | null) => stages.data?.items.find((stage) => stage.id === id)?.name ?? '—';

  const set = (name: string, value: string | null) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    setCursors([]);
    setParams(next, { replace: true });
  };
  const query: ContactListQuery = {
    limit: PAGE_SIZE,
    q: params.get('q') || undefined,
    country: params.get('country') ? [params.get('country')!.toUpperCase()] : undefined,
    funnel_stage_ids: params.get('stage') ? [params.get('stage')!] : undefined,
    origin: params.get('origin') ? [params.get('origin')!] : undefined,
    opted_out: params.get('opted_out') ? params.get('opted_out') === 'true' : undefined,
    property_filter: params.getAll('property_filter').length > 0 ? params.getAll('property_filter') : undefined,
    sort: (params.get('sort') as SortKey | null) ?? 'recent',
    sort_dir: (params.get('dir') as 'asc' | 'desc' | null) ?? undefined,
    cursor: cursors.at(-1),
  };
  // The search runs as the person types, once they pause (D242), and at once on Enter.
  const [search, setSearch] = useState(params.get('q') ?? '');
  const typed = useDebounced(search.trim(), SEARCH_DEBOUNCE_MS);
  // biome-ignore lint/correctness/useExhaustiveDependencies: follows the typed text only
  useEffect(() => {
    if (typed !== (params.get('q') ?? '')) set('q', typed || null);
  }, [typed]);
  const contacts = useQuery({
    queryKey: keys.contacts.list(query),
    queryFn: () => api.contacts.list(query),
    placeholderData: keepPreviousData,
  });

  const columns: ColumnDef<Contact>[] = [
    { id: 'name', name: 'Name', isRowHeader: true, allowsSorting: true, render: (c) => contactLabel(c) },
    { id: 'phone', name: 'Phone', render: (c) => c.phone ?? '—' },
    { id: 'email', name: 'Email', render: (c) => c.email ?? '—' },
    { id: 'country', name: 'Country', allowsSorting: true, render: (c) => c.country ?? '—' },
    { id: 'stage', name: 'Stage', render: (c) => stageName(c.funnel_stage_id) },
    { id: 'recent', name: 'Created', allowsSorting: true, render: (c) => time(c.created_at) },
  ];
  const sort: Sort = {
    column: query.sort === 'recent' ? 'recent' : (query.sort ?? 'recent'),
    direction: (query.sort_dir ?? (query.sort === 'recent' ? 'desc' : 'asc')) === 'asc' ? 'ascending' : 'descending',
  };

  return (
    <Page
      title="Contacts"
      actions={
        <>
          <Link className="button primary" href="/contacts/new">
            New contact
          </Link>
          <Link className="button" href="/contacts/import">
            Import CSV
          </Link>
        </>
      }
    >
      <search className="filters" aria-label="Filter contacts">
        <SearchField
          className="field search"
          value={search}
          onChange={setSearch}
          onSubmit={(q) => set('q', q.trim() || null)}
          onClear={() => {
            setSearch('');
            set('q', null);
          }}
        >
          <Label>Search</Label>
          <Input placeholder="Name, email, phone, city" />
        </SearchField>
        <TextInput
          label="Country"
          name="country"
          defaultValue={params.get('country') ?? ''}
          onChange={(v) => set('country', v.length === 2 ? v : null)}
        />
        <SelectInput
          label="Stage"
          name="stage"
          value={params.get('stage') ?? 'any'}
          onChange={(v) => set('stage', v === 'any' ? null : v)}
          options={[
            { id: 'any', label: 'Any stage' },
            ...(stages.data?.items ?? []).map((s) => ({ id: s.id, label: s.name })),
          ]}
        />
        <SelectInput
          label="Origin"
          name="origin"
          value={params.get('origin') ?? 'any'}
          onChange={(v) => set('origin', v === 'any' ? null : v)}
          options={[{ id: 'any', label: 'Any origin' }, ...ORIGINS.map((o) => ({ id: o, label: o }))]}
        />
        <SelectInput
          label="Opted out"
          name="opted_out"
          value={params.get('opted_out') ?? 'any'}
          onChange={(v) => set('opted_out', v === 'any' ? null : v)}
          options={[
            { id: 'any', label: 'Either' },
            { id: 'true', label: 'Opted out' },
            { id: 'false', label: 'Not opted out' },
          ]}
        />
        <fieldset className="property-filters">
          <legend>Custom properties</legend>
          <PropertyFilters rows={propertyRows} onChange={setPropertyFilters} />
        </fieldset>
      </search>
      <QueryView query={contacts}>
        {(page) => (
          <>
            <p aria-live="polite">
              {page.total_count === null || page.total_count === undefined
                ? 'More than 10,000 contacts'
                : `${page.total_count.toLocaleString('en')} ${page.total_count === 1 ? 'contact' : 'contacts'}`}
            </p>
            <DataTable
              label="Contacts"
              columns={columns}
              items={page.items}
              rowKey={(c) => c.id}
              href={(c) => `/contacts/${c.id}`}
              sort={sort}
              onSortChange={(next) => {
                const nextParams = new URLSearchParams(params);
                nextParams.set('sort', next.column === 'stage' ? 'recent' : next.column);
                nextParams.set('dir', next.direction === 'ascending' ? 'asc' : 'desc');
                setCursors([]);
                setParams(nextParams, { replace: true });
              }}
              empty="No contact matches. Clear the filters, create a contact or import a CSV."
            />
            <nav className="pager" aria-label="Pages">
              <Button isDisabled={cursors.length === 0} onPress={() => setCursors((c) => c.slice(0, -1))}>
                Previous page
              </Button>
              <span>Page {cursors.length + 1}</span>
              <Button
                isDisabled={!page.next_cursor}
                onPress={() => page.next_cursor && setCursors((c) => [...c, page.next_cursor!])}
              >
                Next page
              </Button>
            </nav>
          </>
        )}
      </QueryView>
    </Page>
  );
}
