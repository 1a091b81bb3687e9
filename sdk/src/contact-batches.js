// Loading contacts from a CSV in batches (decisions §12), shared by the CLI's `crm contacts import` and the
// console's import page: a row becomes a batch item, and a refused batch names the item to set aside and why.
import { ApiError } from './errors.js';
/** A CSV row -> a batch item: contact fields as given (empty cells left out), `properties.<key>` as TEXT values. */
export function contactItemOf(row) {
    const item = {};
    const properties = {};
    for (const [column, raw] of Object.entries(row)) {
        const value = raw.trim();
        if (value === '')
            continue;
        if (column.startsWith('properties.')) {
            // The kind is the property's: a JSON cell ({"kind":"NUMBER","value_number":3}) is taken as is.
            properties[column.slice('properties.'.length)] = value.startsWith('{')
                ? JSON.parse(value)
                : { kind: 'TEXT', value_text: value };
        }
        else if (column === 'opted_out')
            item.opted_out = value.toLowerCase() === 'true';
        else
            item[column] = value;
    }
    if (Object.keys(properties).length > 0)
        item.properties = properties;
    return item;
}
/** Where a batch refusal points: the item's index, from `loc` or `detail.index`; undefined for another error. */
export function refusedItemIndex(error) {
    if (!(error instanceof ApiError))
        return undefined;
    const detail = error.detail;
    if (Array.isArray(detail)) {
        const loc = detail[0]?.loc;
        return loc?.[0] === 'body' && loc[1] === 'items' && typeof loc[2] === 'number' ? loc[2] : undefined;
    }
    const index = detail?.index;
    return typeof index === 'number' ? index : undefined;
}
/** Why a batch's item was refused, in one line (`email: …; phone: …`, or the error's detail). */
export function refusalReason(error) {
    const detail = error.detail;
    if (Array.isArray(detail)) {
        return detail
            .map((issue) => `${issue.loc?.slice(3).join('.')}: ${issue.msg}`)
            .join('; ');
    }
    return JSON.stringify(detail);
}
/**
 * Every item a batch refusal names, with that item's own reasons: a 422 lists issues of any number of items
 * (`loc` ["body","items",index,…]); a 409 names one (`detail.index`). Undefined when the refusal names no item.
 */
export function refusedItems(error) {
    if (!(error instanceof ApiError))
        return undefined;
    const detail = error.detail;
    const items = new Map();
    if (Array.isArray(detail)) {
        for (const issue of detail) {
            const loc = issue.loc ?? [];
            if (loc[0] !== 'body' || loc[1] !== 'items' || typeof loc[2] !== 'number')
                return undefined;
            const field = loc.slice(3).join('.');
            items.set(loc[2], [...(items.get(loc[2]) ?? []), field ? `${field}: ${issue.msg}` : String(issue.msg)]);
        }
        return items.size > 0 ? items : undefined;
    }
    const index = detail?.index;
    if (typeof index !== 'number')
        return undefined;
    const { code, field, conflicting_contact_id: holder } = detail;
    const reason = typeof code === 'string'
        ? `${typeof field === 'string' ? `${field}: ` : ''}${code}${typeof holder === 'string' ? ` (held by contact ${holder})` : ''}`
        : JSON.stringify(detail);
    return new Map([[index, [reason]]]);
}
