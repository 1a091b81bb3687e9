// Whether a write changes a contact (D155): an update that leaves every column and property value as it was
// changes nothing, so it writes nothing, keeps `updated_at` and records no `contact.updated` event. One rule for a
// single PATCH (contacts.service.ts) and for each item of a batch upsert (contact-batch-plan.ts).
import type { StoredValue } from '../properties/property-values.ts';
import type { ContactRecord } from './contacts.repo.ts';

const sameScalar = (a: unknown, b: unknown) =>
  a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : (a ?? null) === (b ?? null);

/** JSON with object keys sorted: a stored jsonb value compares equal to the same value given in another key order. */
const canonical = (value: unknown): string =>
  JSON.stringify(value ?? null, (_, inner) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );

const sameValue = (a: StoredValue, b: StoredValue) =>
  sameScalar(a.value_text, b.value_text) &&
  (a.value_number === null || b.value_number === null
    ? a.value_number === b.value_number
    : Number(a.value_number) === Number(b.value_number)) &&
  sameScalar(a.value_bool, b.value_bool) &&
  sameScalar(a.value_date, b.value_date) &&
  canonical(a.value_json) === canonical(b.value_json);

/**
 * Whether `row` (the contact as the update leaves it) differs from `current` in a column other than `updated_at`,
 * or the update writes a property value that differs from the stored one or removes one that is stored.
 */
export function changesAnything(
  current: ContactRecord,
  row: ContactRecord,
  properties: { write: StoredValue[]; remove: string[] },
  stored: StoredValue[],
): boolean {
  for (const column of Object.keys(row) as (keyof ContactRecord)[]) {
    if (column !== 'updated_at' && !sameScalar(row[column], current[column])) return true;
  }
  const byProperty = new Map(stored.map((value) => [value.property_id, value]));
  if (properties.remove.some((propertyId) => byProperty.has(propertyId))) return true;
  return properties.write.some((value) => {
    const before = byProperty.get(value.property_id);
    return !before || !sameValue(before, value);
  });
}
