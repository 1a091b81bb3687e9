// A rule's conditions as rows of field, operator and value (decisions §20): the fields and operators of the
// contract, a value chosen from a list where the field has one; the API's 422 at its row (`conditions.N.value`).
import type { components } from '@crm-messaging/sdk';
import { useState } from 'react';
import { Button } from 'react-aria-components';
import { type Option, SelectInput, TextInput } from '../../../ui/fields.tsx';
import { useFunnelStages, useProperties } from '../../../ui/lookups.ts';
import { userOptions, useUsers } from './automation-api.ts';
import { CONDITION_FIELDS, OPERATOR_LABELS, PROPERTY_FIELD, STATUSES } from './rule-words.ts';

export interface ConditionRow {
  id: number;
  /** One of CONDITION_FIELDS' ids (`contact.properties.` with `propertyKey`). */
  field: string;
  propertyKey: string | null;
  operator: string;
  value: string;
}

export type Condition = components['schemas']['AutomationCondition'];

export function conditionOf(row: ConditionRow): Condition {
  const field = row.field === PROPERTY_FIELD ? `${PROPERTY_FIELD}${row.propertyKey ?? ''}` : row.field;
  const value = row.field === 'within_business_hours' ? row.value === 'true' : row.value;
  return { field, operator: row.operator as Condition['operator'], value };
}

export function conditionRowOf(condition: Condition, id: number): ConditionRow {
  const property = condition.field.startsWith(PROPERTY_FIELD);
  return {
    id,
    field: property ? PROPERTY_FIELD : condition.field,
    propertyKey: property ? condition.field.slice(PROPERTY_FIELD.length) : null,
    operator: condition.operator,
    value: String(condition.value),
  };
}

const YES_NO: Option[] = [
  { id: 'true', label: 'Yes' },
  { id: 'false', label: 'No' },
];

export function ConditionRows({
  rows,
  onChange,
  errorAt,
}: {
  rows: ConditionRow[];
  onChange: (rows: ConditionRow[]) => void;
  errorAt: (name: string) => string | undefined;
}) {
  const [nextId, setNextId] = useState(rows.length);
  const properties = useProperties();
  const stages = useFunnelStages();
  const users = useUsers();
  const setRow = (id: number, change: Partial<ConditionRow>) =>
    onChange(rows.map((row) => (row.id === id ? { ...row, ...change } : row)));

  /** The choices of a field's value where it has a list; a text otherwise. */
  const valueOptions = (field: string): Option[] | undefined => {
    switch (field) {
      case 'within_business_hours':
        return YES_NO;
      case 'conversation.status':
        return STATUSES.map(({ id }) => ({ id, label: id }));
      case 'conversation.assignee':
        return [
          { id: 'unassigned', label: 'Nobody' },
          { id: 'ai', label: 'The AI assistant' },
          ...userOptions(users.data?.items),
        ];
      case 'contact.funnel_stage_id':
        return (stages.data?.items ?? []).map((stage) => ({ id: stage.id, label: stage.name }));
      default:
        return undefined;
    }
  };

  return (
    <fieldset className="property-filters">
      <legend>Conditions (all must hold; none: every message)</legend>
      <ul className="rows">
        {rows.map((row, index) => {
          const field = CONDITION_FIELDS.find((candidate) => candidate.id === row.field);
          const options = valueOptions(row.field);
          const n = index + 1;
          const at = `conditions.${index}`;
          return (
            <li key={row.id}>
              <SelectInput
                label={`Condition ${n} field`}
                name={`${at}.field`}
                value={row.field}
                onChange={(value) => {
                  const next = CONDITION_FIELDS.find((candidate) => candidate.id === value) ?? CONDITION_FIELDS[0];
                  if (next)
                    setRow(row.id, {
                      field: next.id,
                      operator: next.operators[0] ?? 'equals',
                      value: next.id === 'within_business_hours' ? 'true' : '',
                    });
                }}
                options={CONDITION_FIELDS.map(({ id, label }) => ({ id, label }))}
              />
              {row.field === PROPERTY_FIELD ? (
                <SelectInput
                  label={`Condition ${n} property`}
                  name={`${at}.property`}
                  value={row.propertyKey}
                  onChange={(propertyKey) => setRow(row.id, { propertyKey })}
                  options={(properties.data?.items ?? []).map((property) => ({
                    id: property.key,
                    label: property.label,
                  }))}
                />
              ) : null}
              <SelectInput
                label={`Condition ${n} operator`}
                name={`${at}.operator`}
                value={row.operator}
                onChange={(operator) => setRow(row.id, { operator: operator ?? 'equals' })}
                options={(field?.operators ?? ['equals']).map((id) => ({ id, label: OPERATOR_LABELS[id] ?? id }))}
              />
              {options ? (
                <SelectInput
                  label={`Condition ${n} value`}
                  name={`${at}.value`}
                  value={row.value || null}
                  onChange={(value) => setRow(row.id, { value: value ?? '' })}
                  options={options}
                  error={errorAt(`${at}.value`) ?? errorAt(at)}
                />
              ) : (
                <TextInput
                  label={`Condition ${n} value`}
                  name={`${at}.value`}
                  value={row.value}
                  onChange={(value) => setRow(row.id, { value })}
                  error={errorAt(`${at}.value`) ?? errorAt(at)}
                />
              )}
              <Button
                aria-label={`Remove condition ${n}`}
                onPress={() => onChange(rows.filter((r) => r.id !== row.id))}
              >
                Remove
              </Button>
            </li>
          );
        })}
      </ul>
      {errorAt('conditions') ? <p className="field-error">{errorAt('conditions')}</p> : null}
      <Button
        onPress={() => {
          onChange([
            ...rows,
            { id: nextId, field: 'message.text', propertyKey: null, operator: 'contains', value: '' },
          ]);
          setNextId((n) => n + 1);
        }}
      >
        Add a condition
      </Button>
    </fieldset>
  );
}
