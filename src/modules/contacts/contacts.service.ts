// Contacts: create, read, update, delete, list; duplicates, messaging_status, funnel stage, sub-origin and custom
// property values (contract: Contact; decisions §5).
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/errors.ts';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound, validationError } from '../../http/errors.ts';
import type { ValidationIssue } from '../../http/validation.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import { recordEvents } from '../events/events.ts';
import { findInitialStage, findStage } from '../funnel-stages/funnel-stages.repo.ts';
import { listProperties } from '../properties/properties.repo.ts';
import type { PropertyValueInput } from '../properties/properties.schemas.ts';
import {
  checkValue,
  type Definition,
  propertiesOf,
  type StoredValue,
  toPropertyValue,
} from '../properties/property-values.ts';
import { findSubOrigin, findSubOriginByKey } from '../sub-origins/sub-origins.repo.ts';
import { batchUpsert } from './contact-batch.ts';
import { listConditions, listFingerprint } from './contact-filters.ts';
import { initialMessagingStatus, messagingStatusAfterPhoneChange, optOutChange } from './contact-intake.ts';
import { pageAndCount, planPage } from './contact-list.ts';
import { present, readContact } from './contact-view.ts';
import * as repo from './contacts.repo.ts';
import type { Contact, ContactBatch, ContactInput, ContactListQuery, ContactPatch } from './contacts.schemas.ts';

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

function isForeignKeyViolation(error: unknown, constraint: string): boolean {
  const pgError = error as { code?: string; constraint?: string; message?: string } | undefined;
  if (pgError?.code !== '23503') return false;
  return pgError.constraint === constraint || (pgError.message ?? '').includes(`"${constraint}"`);
}

async function definitionsByKey(db: Kysely<DB>, orgId: string): Promise<Map<string, Definition>> {
  return new Map((await listProperties(db, orgId)).map((row) => [row.key, row]));
}

/** Checks a `properties` map; `create` also enforces required properties (decisions §5: on create only). */
function checkProperties(
  definitions: Map<string, Definition>,
  input: Record<string, PropertyValueInput | null>,
  create: boolean,
): { write: StoredValue[]; remove: string[] } {
  const issues: ValidationIssue[] = [];
  const write: StoredValue[] = [];
  const remove: string[] = [];
  for (const [key, value] of Object.entries(input)) {
    const loc = ['body', 'properties', key];
    const definition = definitions.get(key);
    if (!definition || definition.archived_at !== null) {
      const msg = definition ? 'Property is archived' : 'Unknown property key';
      issues.push({ loc, msg, type: 'value_error', input: value });
      continue;
    }
    const checked = checkValue(definition, value, loc);
    if (Array.isArray(checked)) issues.push(...checked);
    else if (checked === null) remove.push(definition.id);
    else write.push(checked);
  }
  if (create) {
    const given = new Set(write.map((value) => value.property_id));
    for (const definition of definitions.values()) {
      if (definition.required && definition.archived_at === null && !given.has(definition.id)) {
        issues.push({ loc: ['body', 'properties', definition.key], msg: 'Field required', type: 'missing' });
      }
    }
  }
  if (issues.length > 0) throw new ApiError(422, issues);
  return { write, remove };
}

/** sub_origin_id and/or sub_origin_key -> the sub-origin's id (null clears, undefined leaves alone). */
async function resolveSubOrigin(db: Kysely<DB>, orgId: string, input: ContactInput) {
  const { sub_origin_id: id, sub_origin_key: key } = input;
  const byId = id ? await findSubOrigin(db, orgId, id) : undefined;
  if (id && !byId)
    throw validationError(['body', 'sub_origin_id'], 'Not a sub-origin of this organization', 'value_error', {
      input: id,
    });
  const byKey = key ? await findSubOriginByKey(db, orgId, key) : undefined;
  if (key && !byKey)
    throw validationError(['body', 'sub_origin_key'], 'Not a sub-origin of this organization', 'value_error', {
      input: key,
    });
  if (byId && byKey && byId.id !== byKey.id) {
    throw validationError(['body', 'sub_origin_key'], 'Names another sub-origin than sub_origin_id', 'value_error', {
      input: key,
    });
  }
  if (byId || byKey) return (byId ?? byKey)?.id as string;
  const given = 'sub_origin_id' in input || 'sub_origin_key' in input;
  return given ? null : undefined;
}

async function checkStage(db: Kysely<DB>, orgId: string, stageId: string) {
  if (!(await findStage(db, orgId, stageId))) {
    throw validationError(['body', 'funnel_stage_id'], 'Not a funnel stage of this organization', 'value_error', {
      input: stageId,
    });
  }
}

export function createContactsService(deps: { db: Kysely<DB>; clock: Clock }) {
  const { db, clock } = deps;

  async function view(executor: Kysely<DB>, orgId: string, rows: repo.ContactRecord[]): Promise<Contact[]> {
    const values = await repo.loadValues(
      executor,
      orgId,
      rows.map((row) => row.id),
    );
    const byContact = new Map<string, Contact['properties']>();
    for (const value of values) {
      const properties = byContact.get(value.contact_id) ?? {};
      properties[value.key] = toPropertyValue(value.kind, value);
      byContact.set(value.contact_id, properties);
    }
    return rows.map((row) => present(row, byContact.get(row.id) ?? {}));
  }

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
        throw new ApiError(409, {
          code: 'duplicate_contact',
          field,
          conflicting_contact_id: holder?.id ?? null,
          first_name: holder?.first_name ?? null,
          last_name: holder?.last_name ?? null,
          email: holder?.email ?? null,
          phone: holder?.phone ?? null,
          social_handle: holder?.social_handle ?? null,
        });
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
    input: ContactInput & { opted_out?: boolean | undefined },
    definitions: Map<string, Definition>,
  ): Promise<Contact> {
    const properties = checkProperties(definitions, input.properties ?? {}, true);
    const subOriginId = await resolveSubOrigin(trx, orgId, input);
    if (input.funnel_stage_id) await checkStage(trx, orgId, input.funnel_stage_id);
    // decisions §5: a new contact starts in the initial stage when none is given.
    const stageId = input.funnel_stage_id ?? (await findInitialStage(trx, orgId))?.id ?? null;
    const now = clock.now();
    const row = await repo.insertContact(trx, {
      org_id: orgId,
      id: newId('ct'),
      first_name: input.first_name ?? null,
      last_name: input.last_name ?? null,
      email: input.email ?? null,
      phone: input.phone ?? null,
      country: input.country ?? null,
      city: input.city ?? null,
      social_handle: input.social_handle ?? null,
      origin: 'API',
      sub_origin_id: subOriginId ?? null,
      messaging_status: initialMessagingStatus(input.phone),
      funnel_stage_id: stageId,
      owner_id: input.owner_id ?? null,
      // A batch item may create a contact already opted out (decisions §12 items take PATCH fields, §14).
      ...(input.opted_out ? optOutChange(true, now) : {}),
      created_at: now,
      updated_at: now,
    });
    await repo.writeValues(trx, orgId, row.id, properties.write);
    const contact = (await view(trx, orgId, [row]))[0] as Contact;
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
    const subOriginId = await resolveSubOrigin(trx, orgId, patch);
    if (patch.funnel_stage_id) await checkStage(trx, orgId, patch.funnel_stage_id);
    const set: Record<string, unknown> = {};
    for (const field of [
      'first_name',
      'last_name',
      'email',
      'country',
      'city',
      'social_handle',
      'owner_id',
      'funnel_stage_id',
    ] as const) {
      if (field in patch) set[field] = patch[field] ?? null;
    }
    if (subOriginId !== undefined) set.sub_origin_id = subOriginId;
    if ('phone' in patch) {
      const phone = patch.phone ?? null;
      set.phone = phone;
      const status = messagingStatusAfterPhoneChange(current.phone, phone);
      if (status) set.messaging_status = status;
    }
    // decisions §14: `opted_out_at` tells when the contact last opted out; the same value changes nothing.
    if (patch.opted_out !== undefined && patch.opted_out !== current.opted_out) {
      Object.assign(set, optOutChange(patch.opted_out, clock.now()));
    }
    if (Object.keys(patch).length > 0) set.updated_at = clock.now();
    const row = Object.keys(set).length > 0 ? await repo.updateContact(trx, orgId, id, set) : current;
    if (!row) throw notFound();
    await repo.removeValues(trx, orgId, id, properties.remove);
    await repo.writeValues(trx, orgId, id, properties.write);
    const contact = (await view(trx, orgId, [row]))[0] as Contact;
    if (Object.keys(patch).length > 0) {
      await recordEvents(trx, orgId, [{ type: 'contact.updated', data: contact }], clock.now());
    }
    return contact;
  }

  return {
    get,

    async create(orgId: string, input: ContactInput): Promise<Contact> {
      return guardDuplicates(orgId, input, () =>
        db.transaction().execute(async (trx) => createIn(trx, orgId, input, await definitionsByKey(trx, orgId))),
      );
    },

    async update(orgId: string, id: string, patch: ContactPatch): Promise<Contact> {
      return guardDuplicates(orgId, patch, () =>
        db.transaction().execute(async (trx) => {
          const current = await repo.findContact(trx, orgId, id, { lock: true });
          if (!current) throw notFound();
          return updateIn(trx, orgId, current, patch, await definitionsByKey(trx, orgId));
        }),
      );
    },

    batchUpsert: (orgId: string, body: ContactBatch) =>
      batchUpsert({ db, createIn, updateIn, guardDuplicates, definitionsByKey }, orgId, body),

    async remove(orgId: string, id: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
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
        items: page.contacts.map(({ property_values: values, ...row }) => present(row, propertiesOf(values))),
        next_cursor: page.nextCursor,
        total_count: total,
      };
    },
  };
}

export type ContactsService = ReturnType<typeof createContactsService>;
