// The audience of a new broadcast (decisions §16): the contact list's own filters, as `POST /v1/broadcasts` takes
// them in `audience`, with a live count of the contacts that match (the contact list's total, asked for after the
// person stops typing). The server is the one judge of a filter: its 422 shows at the filter it names.
import type { ContactListQuery, ContactOrigin, components } from '@crm-messaging/sdk';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { useDebounced } from '../../ui/debounce.ts';
import { showError } from '../../ui/errors.ts';
import { SelectInput, TextInput } from '../../ui/fields.tsx';
import { ORIGINS, useFunnelStages } from '../../ui/lookups.ts';
import { PropertyFilters, type PropertyRow, propertyFilterOf } from '../../ui/property-filters.tsx';

/** The `audience` body: the filters of `GET /v1/contacts`, arrays as arrays (decisions §16). */
type Audience = components['schemas']['ContactFilters'];

/** What the filter fields hold, one string each; `audienceOf` turns them into the body. */
export interface AudienceForm {
  q: string;
  country: string;
  origin: string;
  stage: string;
  owner: string;
  createdFrom: string;
  createdTo: string;
  optedOut: string;
  properties: PropertyRow[];
}

export const EMPTY_AUDIENCE: AudienceForm = {
  q: '',
  country: '',
  origin: 'any',
  stage: 'any',
  owner: 'any',
  createdFrom: '',
  createdTo: '',
  optedOut: 'any',
  properties: [],
};

/** One filter field: a text field, or a choice among `options` (whose `any` sets no filter). */
interface Filter {
  field: Exclude<keyof AudienceForm, 'properties'>;
  api: string;
  label: string;
  type?: 'search' | 'date';
  description?: string;
  options?: { id: string; label: string }[];
}

const anyOr = (label: string, options: { id: string; label: string }[]) => [{ id: 'any', label }, ...options];

export function audienceOf(form: AudienceForm): Audience {
  const audience: Audience = {};
  if (form.q.trim()) audience.q = form.q.trim();
  const countries = form.country
    .split(',')
    .map((c) => c.trim().toUpperCase())
    .filter(Boolean);
  if (countries.length > 0) audience.country = countries;
  if (form.origin !== 'any') audience.origin = [form.origin as ContactOrigin];
  if (form.stage !== 'any') audience.funnel_stage_ids = [form.stage];
  if (form.owner !== 'any') audience.owner_id = [form.owner];
  if (form.createdFrom) audience.created_from = form.createdFrom;
  if (form.createdTo) audience.created_to = form.createdTo;
  if (form.optedOut !== 'any') audience.opted_out = form.optedOut === 'true';
  const properties = propertyFilterOf(form.properties);
  if (properties.length > 0) audience.property_filter = properties;
  return audience;
}

/** How many contacts the audience matches now: the contact list's total for the same filters. */
function AudienceCount({ audience }: { audience: Audience }) {
  const settled = useDebounced(audience, 400);
  const query: ContactListQuery = { ...settled, limit: 1 } as ContactListQuery;
  const count = useQuery({
    queryKey: keys.contacts.list({ audienceCount: settled }),
    queryFn: () => api.contacts.list(query),
    placeholderData: keepPreviousData,
    retry: false,
  });
  let text: string;
  if (count.isError) text = `The filters cannot be counted: ${showError(count.error).message ?? 'check them.'}`;
  else if (!count.data) text = 'Counting the contacts that match…';
  else if (count.data.total_count === null || count.data.total_count === undefined)
    text = 'More than 10,000 contacts match.';
  else
    text = `${count.data.total_count.toLocaleString('en')} ${count.data.total_count === 1 ? 'contact matches' : 'contacts match'}.`;
  return (
    <div className="notice audience-count">
      <p role="status" aria-live="polite">
        <strong>{text}</strong>
        {count.isFetching && count.data ? <span className="muted"> (updating…)</span> : null}
      </p>
      <p className="muted">Contacts without a phone, or whose number is not on the network, are left out.</p>
    </div>
  );
}

export function AudienceFilters({
  value,
  onChange,
  errorAt,
}: {
  value: AudienceForm;
  onChange: (next: AudienceForm) => void;
  /** The API's message for a filter (`q`, `country`, `property_filter`, …), from a 422 at `["body","audience",…]`. */
  errorAt: (name: string) => string | undefined;
}) {
  const stages = useFunnelStages();
  const people = useQuery({ queryKey: keys.users.list(), queryFn: () => api.console.users.list(), staleTime: 60_000 });
  const set = <K extends keyof AudienceForm>(name: K, field: AudienceForm[K]) => onChange({ ...value, [name]: field });
  // The filter fields in the order shown: `api` is the filter's name in the body, where a 422 at it points.
  const filters: Filter[] = [
    { field: 'q', api: 'q', label: 'Search', type: 'search', description: 'Name, email, phone or city contains' },
    { field: 'country', api: 'country', label: 'Countries', description: 'Codes, separated by commas (MX, BR)' },
    {
      field: 'stage',
      api: 'funnel_stage_ids',
      label: 'Funnel stage',
      options: anyOr(
        'Any stage',
        (stages.data?.items ?? []).map((s) => ({ id: s.id, label: s.name })),
      ),
    },
    {
      field: 'origin',
      api: 'origin',
      label: 'Origin',
      options: anyOr(
        'Any origin',
        ORIGINS.map((o) => ({ id: o, label: o })),
      ),
    },
    {
      field: 'owner',
      api: 'owner_id',
      label: 'Owner',
      options: anyOr(
        'Anyone',
        (people.data?.items ?? []).map((u) => ({ id: u.id, label: u.name ?? u.email })),
      ),
    },
    {
      field: 'optedOut',
      api: 'opted_out',
      label: 'Opted out',
      options: anyOr('Either', [
        { id: 'false', label: 'Not opted out' },
        { id: 'true', label: 'Opted out' },
      ]),
    },
    { field: 'createdFrom', api: 'created_from', label: 'Created from', type: 'date' },
    { field: 'createdTo', api: 'created_to', label: 'Created to', type: 'date' },
  ];

  return (
    <fieldset className="card audience">
      <legend>Audience</legend>
      <p className="muted">Every contact that matches all of these filters. Leave them empty to reach every contact.</p>
      <AudienceCount audience={audienceOf(value)} />
      <div className="filters">
        {filters.map((filter) =>
          filter.options ? (
            <SelectInput
              key={filter.field}
              label={filter.label}
              name={`audience.${filter.api}`}
              value={value[filter.field]}
              onChange={(next) => set(filter.field, next ?? 'any')}
              options={filter.options}
              error={errorAt(filter.api)}
            />
          ) : (
            <TextInput
              key={filter.field}
              label={filter.label}
              name={`audience.${filter.api}`}
              {...(filter.type ? { type: filter.type } : {})}
              {...(filter.description ? { description: filter.description } : {})}
              value={value[filter.field]}
              onChange={(next) => set(filter.field, next)}
              error={errorAt(filter.api)}
            />
          ),
        )}
      </div>
      <h3>Custom properties</h3>
      <PropertyFilters
        rows={value.properties}
        onChange={(rows) => set('properties', rows)}
        errorAt={errorAt}
        namePrefix="audience."
      />
    </fieldset>
  );
}
