// Custom property values on contacts: checked against their definitions, stored in the slot of their kind
// (contract: PropertyValue storage rules; decisions §5), and read back with `kind`.
import type { ValidationIssue } from '../../http/schemas.ts';
import type { PropertyKind, PropertyValue, PropertyValueInput } from './properties.schemas.ts';

export interface Definition {
  id: string;
  key: string;
  kind: string;
  options: { key: string; label: string }[];
  required: boolean;
  archived_at: Date | null;
}

export interface StoredValue {
  property_id: string;
  value_text: string | null;
  value_number: number | null;
  value_bool: boolean | null;
  value_date: string | null;
  value_json: unknown;
}

type Slot = 'value_text' | 'value_number' | 'value_bool' | 'value_date' | 'value_json';

export const SLOT: Record<PropertyKind, Slot> = {
  TEXT: 'value_text',
  TEXTAREA: 'value_text',
  EMAIL: 'value_text',
  URL: 'value_text',
  RADIO: 'value_text',
  DROPDOWN: 'value_text',
  NUMBER: 'value_number',
  MONEY: 'value_number',
  BOOLEAN: 'value_bool',
  DATE: 'value_date',
  MULTI_SELECT: 'value_json',
  FILE: 'value_json',
  MULTI_FILE: 'value_json',
};

const TEXT_MAX: Partial<Record<PropertyKind, number>> = { TEXT: 1000, EMAIL: 254, URL: 2048, TEXTAREA: 10000 };
export const FILE_MAX: Partial<Record<PropertyKind, number>> = { FILE: 1, MULTI_FILE: 10 };
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const FILE_KEYS = new Set(['url', 'name', 'mime_type', 'size']);

function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function fileProblem(file: unknown): string | undefined {
  if (file === null || typeof file !== 'object' || Array.isArray(file))
    return 'A file is an object {url, name?, mime_type?, size?}';
  const record = file as Record<string, unknown>;
  const extra = Object.keys(record).find((key) => !FILE_KEYS.has(key));
  if (extra) return `Unknown file field '${extra}'`;
  if (!isHttpUrl(record.url)) return 'A file needs an http(s) `url`';
  if (record.name !== undefined && typeof record.name !== 'string') return '`name` should be a string';
  if (record.mime_type !== undefined && typeof record.mime_type !== 'string') return '`mime_type` should be a string';
  if (record.size !== undefined && !(Number.isInteger(record.size) && (record.size as number) >= 0)) {
    return '`size` should be a non-negative integer';
  }
  return undefined;
}

/** Why a non-null value does not fit its kind, or undefined. `at` is the location suffix inside the slot. */
function valueProblem(definition: Definition, value: unknown): { msg: string; at?: number } | undefined {
  const kind = definition.kind as PropertyKind;
  const optionKeys = new Set(definition.options.map((option) => option.key));
  switch (kind) {
    case 'TEXT':
    case 'TEXTAREA':
    case 'EMAIL':
    case 'URL': {
      const max = TEXT_MAX[kind] ?? 1000;
      if ((value as string).length > max) return { msg: `String should have at most ${max} characters` };
      if (kind === 'EMAIL' && !EMAIL.test(value as string)) return { msg: 'value is not a valid email address' };
      if (kind === 'URL' && !isHttpUrl(value)) return { msg: 'Input should be a valid http(s) URL' };
      return undefined;
    }
    case 'RADIO':
    case 'DROPDOWN':
      return optionKeys.has(value as string) ? undefined : { msg: `Input should be one of the property's option keys` };
    case 'MULTI_SELECT': {
      if (!Array.isArray(value)) return { msg: 'Input should be a list of option keys' };
      const seen = new Set<string>();
      for (const [index, item] of value.entries()) {
        if (typeof item !== 'string' || !optionKeys.has(item)) {
          return { msg: `Input should be one of the property's option keys`, at: index };
        }
        if (seen.has(item)) return { msg: 'Each option may appear only once', at: index };
        seen.add(item);
      }
      return undefined;
    }
    case 'FILE':
    case 'MULTI_FILE': {
      if (!Array.isArray(value)) return { msg: 'Input should be a list of files' };
      const max = FILE_MAX[kind] ?? 1;
      if (value.length > max) return { msg: `A ${kind} value holds at most ${max} file${max === 1 ? '' : 's'}` };
      for (const [index, file] of value.entries()) {
        const problem = fileProblem(file);
        if (problem) return { msg: problem, at: index };
      }
      return undefined;
    }
    default:
      // NUMBER, MONEY, BOOLEAN and DATE are typed by the request schema already.
      return undefined;
  }
}

/**
 * Checks one input value against its definition. Returns the row to store, `null` to remove the value, or the
 * issues (with `loc` under `loc`).
 */
export function checkValue(
  definition: Definition,
  input: PropertyValueInput | null,
  loc: (string | number)[],
): StoredValue | null | ValidationIssue[] {
  if (input === null) return null;
  const kind = definition.kind as PropertyKind;
  if (input.property_id !== undefined && input.property_id !== null && input.property_id !== definition.id) {
    return [
      {
        loc: [...loc, 'property_id'],
        msg: `Input should be '${definition.id}'`,
        type: 'value_error',
        input: input.property_id,
      },
    ];
  }
  if (input.kind !== kind) {
    return [
      {
        loc: [...loc, 'kind'],
        msg: `Input should be '${kind}'`,
        type: 'enum',
        input: input.kind,
        ctx: { expected: `'${kind}'` },
      },
    ];
  }
  const slot = SLOT[kind];
  if (!(slot in input)) return [{ loc: [...loc, slot], msg: 'Field required', type: 'missing' }];
  const value = input[slot];
  // Clearing: a null slot, or an empty list of options or files.
  if (value === null || value === undefined || (Array.isArray(value) && value.length === 0)) return null;
  const problem = valueProblem(definition, value);
  if (problem) {
    const at = problem.at === undefined ? [] : [problem.at];
    return [{ loc: [...loc, slot, ...at], msg: problem.msg, type: 'value_error', input: value }];
  }
  return {
    property_id: definition.id,
    value_text: slot === 'value_text' ? (value as string) : null,
    value_number: slot === 'value_number' ? (value as number) : null,
    value_bool: slot === 'value_bool' ? (value as boolean) : null,
    value_date: slot === 'value_date' ? (value as string) : null,
    value_json: slot === 'value_json' ? value : null,
  };
}

export function toPropertyValue(kind: string, row: StoredValue): PropertyValue {
  return {
    property_id: row.property_id,
    kind: kind as PropertyKind,
    value_text: row.value_text,
    value_number: row.value_number,
    value_bool: row.value_bool,
    value_date: row.value_date,
    value_json: row.value_json ?? null,
  };
}

/** Values read with their property's key and kind -> a contact's `properties` map, keyed by property key. */
export function propertiesOf(values: (StoredValue & { key: string; kind: string })[]): Record<string, PropertyValue> {
  const properties: Record<string, PropertyValue> = {};
  for (const value of values) properties[value.key] = toPropertyValue(value.kind, value);
  return properties;
}
