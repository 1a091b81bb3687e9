// A CSV row -> a batch-upsert item (decisions §12), shared by `crm contacts import` and the console's import page:
// contact fields as given, and each `properties.<key>` cell converted by its property's kind into the value the
// API takes (decisions §5, §6: option keys for RADIO, DROPDOWN and MULTI_SELECT, a date, a number, …). A cell that
// does not convert is a problem of its row, in a sentence; a row's problems are all named at once, so the row can
// be refused without a call (D232). Pure: no I/O, the properties are given (GET /v1/properties).
import type { BodyOf, ContactPatch, Property } from './types.ts';

type BatchItem = BodyOf<'batchUpsertContacts'>['items'][number];

export type CsvRow = Record<string, string>;

/** What the conversion needs of a property: `GET /v1/properties` items fit. */
export type PropertyDefinition = Pick<Property, 'key' | 'label' | 'kind' | 'options' | 'currency' | 'archived_at'>;

type PropertyValueInput = NonNullable<NonNullable<ContactPatch['properties']>[string]>;

/** Between the options of a MULTI_SELECT cell and the URLs of a MULTI_FILE cell: `gold|silver`. */
export const CSV_LIST_SEPARATOR = '|';

/** The fields of a batch item a column may fill: every one the document has (a field added there fails to compile). */
const FIELDS: Record<Exclude<keyof BatchItem, 'properties'>, true> = {
  first_name: true,
  last_name: true,
  email: true,
  phone: true,
  country: true,
  city: true,
  social_handle: true,
  sub_origin_id: true,
  sub_origin_key: true,
  funnel_stage_id: true,
  owner_id: true,
  opted_out: true,
  origin: true,
};
const CONTACT_COLUMNS = new Set(Object.keys(FIELDS));
const PROPERTY_PREFIX = 'properties.';

/** The columns of one file, checked once against the organization's properties. */
export interface CsvColumns {
  properties: Map<string, PropertyDefinition>;
}

/** "A, B or C" */
function oneOf(values: readonly string[]): string {
  return values.length <= 1 ? (values[0] ?? '') : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;
}

/**
 * The file's header against the contact fields and the organization's properties: the columns to convert by, or
 * every column that cannot be imported (a field the API does not have, a property that does not exist or is
 * archived), each in a sentence. A file with such a column is refused whole: each of its rows would be.
 */
export function csvColumns(
  header: readonly string[],
  properties: readonly PropertyDefinition[],
): { columns: CsvColumns; problems: string[] } {
  const byKey = new Map(properties.map((property) => [property.key, property]));
  const columns: CsvColumns = { properties: new Map() };
  const problems: string[] = [];
  for (const column of header) {
    if (column.startsWith(PROPERTY_PREFIX)) {
      const key = column.slice(PROPERTY_PREFIX.length);
      const property = byKey.get(key);
      if (!property) problems.push(`${column}: the organization has no custom property with the key "${key}"`);
      else if (property.archived_at) problems.push(`${column}: the property "${property.label}" is archived`);
      else columns.properties.set(key, property);
    } else if (!CONTACT_COLUMNS.has(column)) {
      problems.push(
        `${column}: not a contact field (the fields are ${oneOf([...CONTACT_COLUMNS])}, and a custom property's column is properties.KEY)`,
      );
    }
  }
  return { columns, problems };
}

const BOOLEANS = new Map([
  ['true', true],
  ['yes', true],
  ['1', true],
  ['false', false],
  ['no', false],
  ['0', false],
]);
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const TEXT_MAX: Record<string, number> = { TEXT: 1000, TEXTAREA: 10000, EMAIL: 254, URL: 2048 };
const FILE_MAX: Record<string, number> = { FILE: 1, MULTI_FILE: 10 };

const isHttpUrl = (text: string) => {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
};

const isDate = (text: string) => {
  const parts = DATE.exec(text);
  if (!parts) return false;
  const [year, month, day] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
};

const listOf = (cell: string) =>
  cell
    .split(CSV_LIST_SEPARATOR)
    .map((part) => part.trim())
    .filter(Boolean);

/** An option by its key or its label, either in any case. */
function optionOf(property: PropertyDefinition, text: string): string | undefined {
  const wanted = text.toLowerCase();
  return property.options.find((option) => option.key.toLowerCase() === wanted || option.label.toLowerCase() === wanted)
    ?.key;
}

const optionList = (property: PropertyDefinition) => oneOf(property.options.map((option) => option.label));

/** The amount of a MONEY cell, with or without the property's currency code before or after it: `12.50 USD`. */
function moneyOf(property: PropertyDefinition, cell: string): number | string {
  const parts = /^([A-Za-z]{3})?\s*([^\sA-Za-z]+)\s*([A-Za-z]{3})?$/.exec(cell);
  const code = (parts?.[1] ?? parts?.[3])?.toUpperCase();
  const amount = parts?.[2] ?? '';
  const currency = property.currency ?? '';
  const example = `an amount such as 12.50${currency ? ` or 12.50 ${currency}` : ''}`;
  if (!parts || (parts[1] && parts[3]) || !NUMBER.test(amount)) return `"${cell}" is not ${example}`;
  if (code && code !== currency)
    return `"${cell}" is in ${code}, and the property "${property.label}" holds amounts in ${currency}`;
  return Number(amount);
}

/** One cell of a property's column -> the value the API takes, or why it cannot be one (a sentence). */
export function propertyValueOf(
  property: PropertyDefinition,
  cell: string,
): { value: PropertyValueInput } | { problem: string } {
  const kind = property.kind as PropertyValueInput['kind'];
  const text = cell.trim();
  switch (property.kind) {
    case 'TEXT':
    case 'TEXTAREA':
    case 'EMAIL':
    case 'URL': {
      const max = TEXT_MAX[property.kind] ?? 1000;
      if (text.length > max) return { problem: `longer than ${max} characters` };
      if (property.kind === 'EMAIL' && !EMAIL.test(text)) return { problem: `"${text}" is not an email address` };
      if (property.kind === 'URL' && !isHttpUrl(text))
        return { problem: `"${text}" is not a web address (http:// or https://)` };
      return { value: { kind, value_text: text } };
    }
    case 'RADIO':
    case 'DROPDOWN': {
      const key = optionOf(property, text);
      if (key === undefined)
        return { problem: `"${text}" is not an option of "${property.label}" (${optionList(property)})` };
      return { value: { kind, value_text: key } };
    }
    case 'MULTI_SELECT': {
      const items = listOf(text);
      const unknown = items.filter((item) => optionOf(property, item) === undefined);
      if (unknown.length > 0) {
        const named = unknown.map((item) => `"${item}"`).join(', ');
        return {
          problem: `${named} ${unknown.length === 1 ? 'is not an option' : 'are not options'} of "${property.label}" (${optionList(property)}, several separated by ${CSV_LIST_SEPARATOR})`,
        };
      }
      return { value: { kind, value_json: [...new Set(items.map((item) => optionOf(property, item)))] } };
    }
    case 'NUMBER':
      if (!NUMBER.test(text)) return { problem: `"${text}" is not a number (such as 42 or 3.5)` };
      return { value: { kind, value_number: Number(text) } };
    case 'MONEY': {
      const amount = moneyOf(property, text);
      return typeof amount === 'number' ? { value: { kind, value_number: amount } } : { problem: amount };
    }
    case 'BOOLEAN': {
      const value = BOOLEANS.get(text.toLowerCase());
      if (value === undefined) return { problem: `"${text}" is not yes or no (true, false, yes, no, 1 or 0)` };
      return { value: { kind, value_bool: value } };
    }
    case 'DATE':
      if (!isDate(text)) return { problem: `"${text}" is not a date written YYYY-MM-DD (such as 2026-03-31)` };
      return { value: { kind, value_date: text } };
    case 'FILE':
    case 'MULTI_FILE': {
      const urls = listOf(text);
      const max = FILE_MAX[property.kind] ?? 1;
      const bad = urls.filter((url) => !isHttpUrl(url));
      if (bad.length > 0)
        return { problem: `${bad.map((url) => `"${url}"`).join(', ')}: not a web address (http:// or https://)` };
      if (urls.length > max)
        return {
          problem: `${urls.length} files, and "${property.label}" holds at most ${max} (separate URLs with ${CSV_LIST_SEPARATOR})`,
        };
      return { value: { kind, value_json: urls.map((url) => ({ url })) } };
    }
    default:
      return { problem: `the property "${property.label}" is of a kind (${property.kind}) this import cannot fill` };
  }
}

/**
 * A CSV row -> a batch item, and every problem of the row (`column: sentence`). Empty cells are left out; a contact
 * the row creates gets origin `IMPORT` unless an `origin` cell names another (D230).
 */
export function contactItemOf(row: CsvRow, columns: CsvColumns): { item: Record<string, unknown>; problems: string[] } {
  const item: Record<string, unknown> = {};
  const properties: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [column, raw] of Object.entries(row)) {
    const value = (raw ?? '').trim();
    if (value === '') continue;
    if (column.startsWith(PROPERTY_PREFIX)) {
      const property = columns.properties.get(column.slice(PROPERTY_PREFIX.length));
      if (!property) continue; // the header's problem, said once for the file (csvColumns)
      const converted = propertyValueOf(property, value);
      if ('problem' in converted) problems.push(`${column}: ${converted.problem}`);
      else properties[property.key] = converted.value;
    } else if (column === 'opted_out') {
      const optedOut = BOOLEANS.get(value.toLowerCase());
      if (optedOut === undefined)
        problems.push(`opted_out: "${value}" is not yes or no (true, false, yes, no, 1 or 0)`);
      else item.opted_out = optedOut;
    } else if (column === 'origin') {
      // A ContactOrigin (the server says which when it is not one, issueSentence).
      item.origin = value.toUpperCase();
    } else if (CONTACT_COLUMNS.has(column)) item[column] = value;
  }
  if (Object.keys(properties).length > 0) item.properties = properties;
  item.origin ??= 'IMPORT';
  return { item, problems };
}
