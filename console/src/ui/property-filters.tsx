// Property filters (decisions §5, §17): rows of property, condition and value that become the contact list's
// `property_filter` (`key:op:value`). One component for the contacts table and a broadcast's audience (D167).
import { useState } from 'react';
import { Button } from 'react-aria-components';
import { SelectInput, TextInput } from './fields.tsx';
import { useProperties } from './lookups.ts';

export interface PropertyRow {
  id: number;
  key: string | null;
  op: string;
  value: string;
}

const OPERATORS = [
  { id: 'eq', label: 'is' },
  { id: 'neq', label: 'is not' },
  { id: 'contains', label: 'contains' },
  { id: 'gt', label: 'greater than' },
  { id: 'gte', label: 'at least' },
  { id: 'lt', label: 'less than' },
  { id: 'lte', label: 'at most' },
  { id: 'in', label: 'one of (a|b)' },
  { id: 'exists', label: 'is set (true/false)' },
];

/** The rows with a property chosen, as `property_filter` values. */
export function propertyFilterOf(rows: PropertyRow[]): string[] {
  return rows.filter((row) => row.key).map((row) => `${row.key}:${row.op}:${row.value}`);
}

/** `property_filter` values (from an address) back into rows; the value may itself hold colons. */
export function propertyRowsOf(filters: string[]): PropertyRow[] {
  return filters.map((filter, index) => {
    const [key = '', op = 'eq', ...value] = filter.split(':');
    return { id: -(index + 1), key: key || null, op, value: value.join(':') };
  });
}

export function PropertyFilters({
  rows,
  onChange,
  errorAt = () => undefined,
  namePrefix = '',
}: {
  rows: PropertyRow[];
  onChange: (rows: PropertyRow[]) => void;
  /** The API's message for `property_filter` or `property_filter.N`. */
  errorAt?: (name: string) => string | undefined;
  /** Before each input's name (`audience.`). */
  namePrefix?: string;
}) {
  const properties = useProperties();
  const [nextRow, setNextRow] = useState(1);
  const setRow = (id: number, change: Partial<PropertyRow>) =>
    onChange(rows.map((row) => (row.id === id ? { ...row, ...change } : row)));
  const propertyOptions = (properties.data?.items ?? [])
    .filter((property) => !property.archived_at)
    .map((property) => ({ id: property.key, label: property.label }));
  return (
    <>
      {rows.length === 0 ? <p className="muted">No property filter.</p> : null}
      <ul className="property-rows">
        {rows.map((row, index) => (
          <li key={row.id} className="filters">
            <SelectInput
              label={`Property ${index + 1}`}
              name={`${namePrefix}property_filter.${index}.key`}
              value={row.key}
              onChange={(key) => setRow(row.id, { key })}
              options={propertyOptions}
              error={errorAt(`property_filter.${index}`)}
            />
            <SelectInput
              label={`Condition ${index + 1}`}
              name={`${namePrefix}property_filter.${index}.op`}
              value={row.op}
              onChange={(op) => setRow(row.id, { op: op ?? 'eq' })}
              options={OPERATORS}
            />
            <TextInput
              label={`Value ${index + 1}`}
              name={`${namePrefix}property_filter.${index}.value`}
              value={row.value}
              onChange={(v) => setRow(row.id, { value: v })}
            />
            <Button
              aria-label={`Remove property filter ${index + 1}`}
              onPress={() => onChange(rows.filter((r) => r.id !== row.id))}
            >
              Remove
            </Button>
          </li>
        ))}
      </ul>
      {errorAt('property_filter') && rows.every((_, index) => !errorAt(`property_filter.${index}`)) ? (
        <p className="field-error">{errorAt('property_filter')}</p>
      ) : null}
      <Button
        onPress={() => {
          onChange([...rows, { id: nextRow, key: null, op: 'eq', value: '' }]);
          setNextRow((n) => n + 1);
        }}
        isDisabled={propertyOptions.length === 0}
      >
        Add a property filter
      </Button>
    </>
  );
}
