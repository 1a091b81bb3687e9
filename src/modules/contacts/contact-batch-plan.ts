// A batch upsert planned in memory (decisions §12) from what one lookup found: for each item, in input order, the
// contact it creates or the matched contact as it leaves it, with the checks of a single create or PATCH
// (contact-rules.ts) and the duplicate rule of the unique indexes, replayed over the batch as if its items were
// written one after another. The first item that fails throws its error, with its index, before anything is written.
import type { Insertable } from 'kysely';
import type { ContactsTable } from '../../db/schema.ts';
import { ApiError } from '../../http/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { Definition, StoredValue } from '../properties/property-values.ts';
import type { HeldValues } from './contact-batch.repo.ts';
import { changesAnything } from './contact-changes.ts';
import {
  checkProperties,
  checkStage,
  type DuplicateHolder,
  duplicateContact,
  newContactRow,
  patchColumns,
  type References,
} from './contact-rules.ts';
import type { ContactRecord, DuplicateField } from './contacts.repo.ts';
import type { ContactBatch, ContactPatch } from './contacts.schemas.ts';

export interface PlannedItem {
  index: number;
  id: string;
  result: 'created' | 'updated';
  /** False for an update that leaves the contact as it was: nothing is written and no event is recorded. */
  changes: boolean;
  write: StoredValue[];
  remove: string[];
}

export interface BatchPlan {
  items: PlannedItem[];
  creates: Insertable<ContactsTable>[];
  updates: ContactRecord[];
  /** Matched contacts that their items leave as they were (answered as they are, not written). */
  unchanged: ContactRecord[];
}

const DUPLICATE_FIELDS: DuplicateField[] = ['email', 'phone', 'social_handle'];

/** How a unique index compares a value: email and social handle case-insensitively, phone exactly. */
const held = (field: DuplicateField, value: string) =>
  `${field}\u0000${field === 'phone' ? value : value.toLowerCase()}`;

/** The emails, phones and social handles the batch's items name: the one lookup finds who holds them. */
export function heldValues(items: readonly ContactPatch[]): HeldValues {
  const of = (field: DuplicateField) => [
    ...new Set(items.flatMap((item) => (typeof item[field] === 'string' ? [item[field]] : []))),
  ];
  return { emails: of('email'), phones: of('phone'), socialHandles: of('social_handle') };
}

/** The matched contact of each item (by its match value), undefined for an item that creates one. */
export function matchedContacts(body: ContactBatch, holders: ContactRecord[]): (ContactRecord | undefined)[] {
  const byValue = new Map(
    holders.flatMap((row) => (row[body.match_on] ? [[held(body.match_on, row[body.match_on] as string), row]] : [])),
  );
  return body.items.map((item) => byValue.get(held(body.match_on, item[body.match_on] as string)));
}

/** An item's error, moved under `["body","items",index]` (422) or given `index` (409 and other detail objects). */
export function atItem(error: unknown, index: number): unknown {
  if (!(error instanceof ApiError)) return error;
  const detail = error.detail;
  if (Array.isArray(detail)) {
    const issues = detail.map((issue) => ({
      ...issue,
      loc: issue.loc[0] === 'body' ? ['body', 'items', index, ...issue.loc.slice(1)] : issue.loc,
    }));
    return new ApiError(error.status, issues, error.headers);
  }
  if (typeof detail === 'object') return new ApiError(error.status, { ...detail, index }, error.headers);
  return error;
}

export function planBatch(
  orgId: string,
  body: ContactBatch,
  holders: ContactRecord[],
  definitions: Map<string, Definition>,
  references: References,
  now: Date,
  /** The property values the matched contacts hold now, by contact id. */
  storedValues: Map<string, StoredValue[]> = new Map(),
): BatchPlan {
  const matched = matchedContacts(body, holders);
  // Who holds each value before the batch (the 409 names that contact, as a single write's 409 would after its
  // rollback), and who holds it as the items are replayed in order.
  const before = new Map<string, DuplicateHolder>();
  const holderOf = new Map<string, string>();
  for (const row of holders) {
    for (const field of DUPLICATE_FIELDS) {
      const value = row[field];
      if (value) {
        before.set(held(field, value), row);
        holderOf.set(held(field, value), row.id);
      }
    }
  }
  const plan: BatchPlan = { items: [], creates: [], updates: [], unchanged: [] };
  for (const [index, item] of body.items.entries()) {
    try {
      const current = matched[index];
      const properties = checkProperties(definitions, item.properties ?? {}, current === undefined);
      let next: Pick<ContactRecord, DuplicateField>;
      let id: string;
      let changes = true;
      if (current) {
        const row: ContactRecord = { ...current, ...patchColumns(current, item, references, now) };
        checkStage(references, item.funnel_stage_id);
        ({ id } = current);
        next = row;
        // An update that changes nothing changes nothing: no write, no updated_at, no contact.updated event.
        changes = changesAnything(current, row, properties, storedValues.get(id) ?? []);
        if (changes) plan.updates.push(row);
        else plan.unchanged.push(current);
      } else {
        id = newId('ct');
        const row = newContactRow(orgId, id, item, references, now);
        checkStage(references, item.funnel_stage_id);
        next = { email: row.email ?? null, phone: row.phone ?? null, social_handle: row.social_handle ?? null };
        plan.creates.push(row);
      }
      // contract (decisions §5): a value another live contact holds is that item's 409, as its unique index says.
      for (const field of DUPLICATE_FIELDS) {
        const value = next[field];
        const holder = value ? holderOf.get(held(field, value)) : undefined;
        if (value && holder !== undefined && holder !== id)
          throw duplicateContact(field, before.get(held(field, value)));
      }
      for (const field of DUPLICATE_FIELDS) {
        const previous = current?.[field];
        if (previous && holderOf.get(held(field, previous)) === id) holderOf.delete(held(field, previous));
        const value = next[field];
        if (value) holderOf.set(held(field, value), id);
      }
      plan.items.push({
        index,
        id,
        result: current ? 'updated' : 'created',
        changes,
        ...(changes ? properties : { write: [], remove: [] }),
      });
    } catch (error) {
      throw atItem(error, index);
    }
  }
  return plan;
}
