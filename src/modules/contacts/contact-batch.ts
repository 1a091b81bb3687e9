// POST /v1/contacts/batch-upsert (decisions §12): up to 100 contacts in one transaction, each updated (PATCH
// semantics) when its match value names a live contact, created otherwise. All or nothing; an error names its item.
// Set-based: one lookup of every value the items name, the checks in memory (contact-batch-plan.ts), then one
// statement per step for the whole batch (update, insert, property values, the answer's read, the events).
import type { Kysely } from 'kysely';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/errors.ts';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB } from '../../db/schema.ts';
import { ApiError } from '../../http/errors.ts';
import type { ValidationIssue } from '../../http/schemas.ts';
import type { Clock } from '../../lib/clock.ts';
import { recordEvents } from '../events/events.ts';
import type { Definition } from '../properties/property-values.ts';
import { insertContacts, lockHolders, storedValuesOf, updateContacts } from './contact-batch.repo.ts';
import { atItem, heldValues, matchedContacts, planBatch } from './contact-batch-plan.ts';
import { loadReferences } from './contact-rules.ts';
import { presentRows } from './contact-view.ts';
import type * as repo from './contacts.repo.ts';
import { findContact, findHolder, removeValuesOf, writeValuesOf } from './contacts.repo.ts';
import type { Contact, ContactBatch, ContactPatch, NewContactInput } from './contacts.schemas.ts';

export interface BatchDeps {
  db: Kysely<DB>;
  clock: Clock;
  createIn(
    trx: Kysely<DB>,
    orgId: string,
    input: NewContactInput,
    definitions: Map<string, Definition>,
  ): Promise<Contact>;
  updateIn(
    trx: Kysely<DB>,
    orgId: string,
    current: repo.ContactRecord,
    patch: ContactPatch,
    definitions: Map<string, Definition>,
  ): Promise<Contact>;
  guardDuplicates<T>(
    orgId: string,
    values: Partial<Record<repo.DuplicateField, string | null>>,
    work: () => Promise<T>,
  ): Promise<T>;
  definitionsByKey(db: Kysely<DB>, orgId: string): Promise<Map<string, Definition>>;
}

type BatchItem = { index: number; result: 'created' | 'updated'; contact: Contact };

/** Every item carries its match value, and no two items share one (email compared case-insensitively). */
function checkMatchValues(body: ContactBatch): void {
  const seen = new Map<string, number>();
  const issues: ValidationIssue[] = [];
  for (const [index, item] of body.items.entries()) {
    const value = item[body.match_on];
    const loc = ['body', 'items', index, body.match_on];
    if (value === undefined || value === null) {
      issues.push({ loc, msg: `Field required (match_on is ${body.match_on})`, type: 'missing' });
      continue;
    }
    const key = body.match_on === 'email' ? value.toLowerCase() : value;
    const first = seen.get(key);
    if (first !== undefined) {
      issues.push({ loc, msg: `Same ${body.match_on} as item ${first}`, type: 'value_error', input: value });
    } else seen.set(key, index);
  }
  if (issues.length > 0) throw new ApiError(422, issues);
}

async function upsertSetBased(deps: BatchDeps, trx: Kysely<DB>, orgId: string, body: ContactBatch) {
  const now = deps.clock.now();
  const definitions = await deps.definitionsByKey(trx, orgId);
  const holders = await lockHolders(trx, orgId, heldValues(body.items));
  const matched = matchedContacts(body, holders);
  // decisions §5: the initial stage is read only when some item creates a contact without a stage of its own.
  const initialStage = body.items.some((item, index) => !matched[index] && !item.funnel_stage_id);
  const references = await loadReferences(trx, orgId, body.items, { initialStage });
  const storedValues = await storedValuesOf(
    trx,
    orgId,
    matched.flatMap((contact) => (contact ? [contact.id] : [])),
  );
  const plan = planBatch(orgId, body, holders, definitions, references, now, storedValues);
  // Updates first: a value an item takes from a contact that an earlier item changed is free by then. New rows in
  // match-value order, so that concurrent batches inserting the same values wait on each other, never deadlock.
  const updated = await updateContacts(trx, orgId, plan.updates);
  const key = (row: { email?: string | null; phone?: string | null }) => String(row[body.match_on]).toLowerCase();
  const inserted = await insertContacts(
    trx,
    [...plan.creates].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)),
  );
  await removeValuesOf(
    trx,
    orgId,
    plan.items.flatMap((item) => item.remove.map((property_id) => ({ contact_id: item.id, property_id }))),
  );
  await writeValuesOf(
    trx,
    orgId,
    plan.items.flatMap((item) => item.write.map((value) => ({ ...value, contact_id: item.id }))),
  );
  const contacts = new Map(
    (await presentRows(trx, orgId, [...updated, ...inserted, ...plan.unchanged])).map((c) => [c.id, c]),
  );
  const items: (BatchItem & { changes: boolean })[] = plan.items.map(({ index, id, result, changes }) => {
    const contact = contacts.get(id);
    // The rows were locked (updated) or made here (created): a missing one is a fault, not a client error.
    if (!contact) throw new Error(`batch upsert lost contact ${id}`);
    return { index, result, contact, changes };
  });
  // decisions §11: the events in the transaction of the change, in input order, one statement; an update that
  // changed nothing has none (D155: a batch sent again after an interrupted import is silent).
  await recordEvents(
    trx,
    orgId,
    items
      .filter(({ changes }) => changes)
      .map(({ result, contact }) => ({
        type: result === 'created' ? ('contact.created' as const) : ('contact.updated' as const),
        data: contact,
      })),
    now,
  );
  return { items: items.map(({ index, result, contact }) => ({ index, result, contact })) };
}

/**
 * The items written one after another with the single create's and PATCH's own steps: the answer when the set-based
 * write meets what its plan could not see three times over (a multi-row update that hands a value from one contact
 * to another in an order the unique index refuses, a stage deleted meanwhile).
 */
async function upsertOneByOne(deps: BatchDeps, orgId: string, body: ContactBatch) {
  let current = 0;
  try {
    return await transactionWithRetry(deps.db, async (trx) => {
      const definitions = await deps.definitionsByKey(trx, orgId);
      const results: BatchItem[] = [];
      for (const [index, item] of body.items.entries()) {
        current = index;
        const holder = await findHolder(trx, orgId, body.match_on, item[body.match_on] as string);
        const existing = holder && (await findContact(trx, orgId, holder.id, { lock: true }));
        results.push(
          existing
            ? { index, result: 'updated', contact: await deps.updateIn(trx, orgId, existing, item, definitions) }
            : { index, result: 'created', contact: await deps.createIn(trx, orgId, item, definitions) },
        );
      }
      return { items: results };
    });
  } catch (error) {
    if (error instanceof ApiError) throw atItem(error, current);
    const item = body.items[current] ?? {};
    try {
      return await deps.guardDuplicates(orgId, item, () => Promise.reject(error));
    } catch (guarded) {
      throw guarded === error ? error : atItem(guarded, current);
    }
  }
}

export async function batchUpsert(deps: BatchDeps, orgId: string, body: ContactBatch) {
  checkMatchValues(body);
  // Each unique violation means another writer committed one of our values, which the next lookup sees: progress.
  // So the batch tries as many times as it has items (and a few more for deadlocks) before the item-by-item path,
  // whose 409 for a match value taken meanwhile would be wrong (the item should update that contact).
  const attempts = body.items.length + 3;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      return await transactionWithRetry(deps.db, (trx) => upsertSetBased(deps, trx, orgId, body));
    } catch (error) {
      if (error instanceof ApiError) throw error;
      // decisions §12: a concurrent batch (or create) that wrote one of our values first makes our write fail on
      // the unique index (after waiting for its commit); a new lookup sees that contact, and the item updates it
      // (its match value) or is refused with that contact's 409 (another field). Deadlocks are retried inside.
      if (!isUniqueViolation(error) && !isForeignKeyViolation(error)) throw error;
    }
  }
  return upsertOneByOne(deps, orgId, body);
}
