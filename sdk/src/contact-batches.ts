// Loading contacts from a CSV in batches (decisions §12), shared by the CLI's `crm contacts import` and the
// console's import page: a row becomes a batch item, and a refused batch names the item to set aside and why.
import { ApiError } from './errors.ts';

export type CsvRow = Record<string, string>;

/**
 * A CSV row -> a batch item: contact fields as given (empty cells left out), `properties.<key>` as TEXT values, and
 * `origin` `IMPORT` unless an `origin` column gives one (it applies to the contacts the item creates).
 */
export function contactItemOf(row: CsvRow): Record<string, unknown> {
  const item: Record<string, unknown> = {};
  const properties: Record<string, unknown> = {};
  for (const [column, raw] of Object.entries(row)) {
    const value = raw.trim();
    if (value === '') continue;
    if (column.startsWith('properties.')) {
      // The kind is the property's: a JSON cell ({"kind":"NUMBER","value_number":3}) is taken as is.
      properties[column.slice('properties.'.length)] = value.startsWith('{')
        ? JSON.parse(value)
        : { kind: 'TEXT', value_text: value };
    } else if (column === 'opted_out') item.opted_out = value.toLowerCase() === 'true';
    else if (column === 'origin') item.origin = value.toUpperCase();
    else item[column] = value;
  }
  if (Object.keys(properties).length > 0) item.properties = properties;
  // A contact the file creates came in by an import (public API: ContactOrigin `IMPORT`), unless its row says how.
  item.origin ??= 'IMPORT';
  return item;
}

/** Where a batch refusal points: the item's index, from `loc` or `detail.index`; undefined for another error. */
export function refusedItemIndex(error: unknown): number | undefined {
  if (!(error instanceof ApiError)) return undefined;
  const detail = error.detail as unknown;
  if (Array.isArray(detail)) {
    const loc = (detail[0] as { loc?: unknown[] } | undefined)?.loc;
    return loc?.[0] === 'body' && loc[1] === 'items' && typeof loc[2] === 'number' ? loc[2] : undefined;
  }
  const index = (detail as { index?: unknown } | null)?.index;
  return typeof index === 'number' ? index : undefined;
}

/** Why a batch's item was refused, in one line (`email: …; phone: …`, or the error's detail). */
export function refusalReason(error: ApiError): string {
  const detail = error.detail as unknown;
  if (Array.isArray(detail)) {
    return detail
      .map((issue: { loc?: unknown[]; msg?: string }) => `${issue.loc?.slice(3).join('.')}: ${issue.msg}`)
      .join('; ');
  }
  return JSON.stringify(detail);
}

/**
 * Every item a batch refusal names, with that item's own reasons: a 422 lists issues of any number of items
 * (`loc` ["body","items",index,…]); a 409 names one (`detail.index`). Undefined when the refusal names no item.
 */
export function refusedItems(error: unknown): Map<number, string[]> | undefined {
  if (!(error instanceof ApiError)) return undefined;
  const detail = error.detail as unknown;
  const items = new Map<number, string[]>();
  if (Array.isArray(detail)) {
    for (const issue of detail as { loc?: unknown[]; msg?: string }[]) {
      const loc = issue.loc ?? [];
      if (loc[0] !== 'body' || loc[1] !== 'items' || typeof loc[2] !== 'number') return undefined;
      const field = loc.slice(3).join('.');
      items.set(loc[2], [...(items.get(loc[2]) ?? []), field ? `${field}: ${issue.msg}` : String(issue.msg)]);
    }
    return items.size > 0 ? items : undefined;
  }
  const index = (detail as { index?: unknown } | null)?.index;
  if (typeof index !== 'number') return undefined;
  const { code, field, conflicting_contact_id: holder } = detail as Record<string, unknown>;
  const reason =
    typeof code === 'string'
      ? `${typeof field === 'string' ? `${field}: ` : ''}${code}${typeof holder === 'string' ? ` (held by contact ${holder})` : ''}`
      : JSON.stringify(detail);
  return new Map([[index, [reason]]]);
}
