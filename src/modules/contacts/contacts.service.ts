// Contacts: create, read, update, delete, list; duplicates, messaging_status, funnel stage, sub-origin and custom
// property values (contract: Contact; decisions §5).

import type { Kysely } from 'kysely';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/errors.ts';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB } from '../../db/schema.ts';
import { notFound, validationError } from '../../http/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import { recordEvents } from '../events/events.ts';
import { listProperties } from '../properties/properties.repo.ts';
import { type Definition, propertiesOf } from '../properties/property-values.ts';
import { storedValuesOf } from './contact-batch.repo.ts';
import { batchUpsert } from './contact-batch.ts';
import { changesAnything } from './contact-changes.ts';
import { listConditions, listFingerprint } from './contact-filters.ts';
import { pageAndCount, planPage } from './contact-list.ts';
import {
  checkProperties,
  checkStage,
  duplicateContact,
  loadReferences,
  newContactRow,
  patchColumns,
} from './contact-rules.ts';
import { present, presentRows, readContact } from './contact-view.ts';
import * as repo from './contacts.repo.ts';
import type {
  Contact,
  ContactBatch,
  ContactInput,
  ContactListQuery,
  ContactPatch,
  NewContactInput,
} from './contacts.schemas.ts';

const DUPLICATE_INDEXES: Record<string, repo.DuplicateField> = {
  contacts_email_uq: 'email',
  contacts_phone_uq: 'phone',
  contacts_social_handle_uq: 'social_handle',
};

const FOREIGN_KEYS: [string, string][] = [
  ['contacts_funnel_stage_fk', 'funnel_stage_id'],
  ['contacts_sub_origin_fk', 'sub_origin_id'],
  ['contact_property_values_property_fk', 'properties'],
];

async function definitionsByKey(db: Kysely<DB>, orgId: string): Promise<Map<string, Definition>> {
  return new Map((await listProperties(db, orgId)).map((row) => [row.key, row]));
}

export function createContactsService(deps: { db: Kysely<DB>; clock: Clock }) {
  const { db, clock } = deps;

  /** Runs a write; a duplicate email, phone or social handle becomes the contract's 409 `duplicate_contact`. */
  async function guardDuplicates<T>(
    orgId: string,
    values: Partial<Record<repo.DuplicateField, string | null>>,
    work: () => Promise<T>,
  ) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        // A stage, sub-origin or property deleted between our check and the write: the foreign key refuses it.
        const reference = FOREIGN_KEYS.find(([constraint]) => isForeignKeyViolation(error, constraint));
        if (reference) {
          throw validationError(
            ['body', reference[1]],
            'Not found in this organization (deleted meanwhile)',
            'value_error',
          );
        }
        const field = Object.entries(DUPLICATE_INDEXES).find(([index]) => isUniqueViolation(error, index))?.[1];
        const value = field ? values[field] : undefined;
        if (!field || !value) throw error;
        const holder = await repo.findHolder(db, orgId, field, value);
        // The holder was deleted meanwhile: the value is free now, so try again.
        if (!holder && attempt < 3) continue;
        throw duplicateContact(field, holder);
      }
    }
  }

  async function get(orgId: string, id: string): Promise<Contact> {
    const found = await readContact(db, orgId, id);
    if (!found) throw notFound();
    return found;
  }

  /** decisions §5: one contact created as `POST /v1/contacts` does, in the caller's transaction. */
  async function createIn(
    trx: Kysely<DB>,
    orgId: string,
    input: NewContactInput,
    definitions: Map<string, Definition>,
  ): Promise<Contact> {
    const properties = checkProperties(definitions, input.properties ?? {}, true);
    // decisions §5: a new contact starts in the initial stage when none is given.
    const references = await loadReferences(trx, orgId, [input], { initialStage: !input.funnel_stage_id });
    const now = clock.now();
    const newRow = newContactRow(orgId, newId('ct'), input, references, now);
    checkStage(references, input.funnel_stage_id);
    const row = await repo.insertContact(trx, newRow);
    await repo.writeValues(trx, orgId, row.id, properties.write);
    const contact = (await presentRows(trx, orgId, [row]))[0] as Contact;
    // decisions §11: the event is recorded in the transaction of the change.
    await recordEvents(trx, orgId, [{ type: 'contact.created', data: contact }], now);
    return contact;
  }

  /** One contact updated with PATCH semantics, in the caller's transaction (`current` is locked). */
  async function updateIn(
    trx: Kysely<DB>,
    orgId: string,
    current: repo.ContactRecord,
    patch: ContactPatch,
    definitions: Map<string, Definition>,
  ): Promise<Contact> {
    const id = current.id;
    const properties = checkProperties(definitions, patch.properties ?? {}, false);
    const references = await loadReferences(trx, orgId, [patch], { initialStage: false });
    const set = patchColumns(current, patch, references, clock.now());
    checkStage(references, patch.funnel_stage_id);
    // The stored values matter only to the properties the patch writes or removes: no round trip otherwise.
    const touchesValues = properties.write.length + properties.remove.length > 0;
    const stored = touchesValues ? ((await storedValuesOf(trx, orgId, [id])).get(id) ?? []) : [];
    // An update that changes nothing changes nothing: no write, no updated_at, no contact.updated event (D155).
    if (!changesAnything(current, { ...current, ...set }, properties, stored)) {
      return (await presentRows(trx, orgId, [current]))[0] as Contact;
    }
    const row = await repo.updateContact(trx, orgId, id, set);
    if (!row) throw notFound();
    await repo.removeValues(trx, orgId, id, properties.remove);
    await repo.writeValues(trx, orgId, id, properties.write);
    const contact = (await presentRows(trx, orgId, [row]))[0] as Contact;
    await recordEvents(trx, orgId, [{ type: 'contact.updated', data: contact }], clock.now());
    return contact;
  }

  return {
    get,

    async create(orgId: string, input: ContactInput): Promise<Contact> {
      return guardDuplicates(orgId, input, () =>
        transactionWithRetry(db, async (trx) => createIn(trx, orgId, input, await definitionsByKey(trx, orgId))),
      );
    },

    async update(orgId: string, id: string, patch: ContactPatch): Promise<Contact> {
      return guardDuplicates(orgId, patch, () =>
        transactionWithRetry(db, async (trx) => {
          const current = await repo.findContact(trx, orgId, id, { lock: true });
          if (!current) throw notFound();
          return updateIn(trx, orgId, current, patch, await definitionsByKey(trx, orgId));
        }),
      );
    },

    batchUpsert: (orgId: string, body: ContactBatch) =>
      batchUpsert({ db, clock, createIn, updateIn, guardDuplicates, definitionsByKey }, orgId, body),

    async remove(orgId: string, id: string): Promise<void> {
      await transactionWithRetry(db, async (trx) => {
        // decisions §5: gone from every read; its email, phone and handle are free again (partial unique indexes).
        if (!(await repo.softDeleteContact(trx, orgId, id, clock.now()))) throw notFound();
        await repo.removeValues(trx, orgId, id);
        await recordEvents(trx, orgId, [{ type: 'contact.deleted', data: { id } }], clock.now());
      });
    },

    async list(orgId: string, timezone: string, query: ContactListQuery) {
      // Property definitions only matter to property_filter: no round trip for them otherwise.
      const definitions = query.property_filter === undefined ? new Map() : await definitionsByKey(db, orgId);
      const filters = listConditions(query, timezone, definitions);
      const plan = planPage(query, listFingerprint(query), clock.now());
      const { page, total } = await pageAndCount(db, orgId, plan, filters, query.include_total === true);
      return {
        items: page.contacts.map((row) => present(row, propertiesOf(row.property_values))),
        next_cursor: page.nextCursor,
        total_count: total,
      };
    },
  };
}

export type ContactsService = ReturnType<typeof createContactsService>;
