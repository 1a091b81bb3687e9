// The rules of a contact write (decisions §5), shared by `POST /v1/contacts`, `PATCH /v1/contacts/{id}` and each item
// of a batch upsert (decisions §12): property values checked against their definitions, sub-origin and funnel stage
// references, the row a create inserts, the columns a PATCH sets, and the 409 of a duplicate. The references are
// read in one lookup for any number of inputs, so a batch reads them once.
import type { Insertable, Kysely } from 'kysely';
import type { ContactsTable, DB } from '../../db/schema.ts';
import { ApiError, validationError } from '../../http/errors.ts';
import type { ValidationIssue } from '../../http/schemas.ts';
import type { PropertyValueInput } from '../properties/properties.schemas.ts';
import { checkValue, type Definition, type StoredValue } from '../properties/property-values.ts';
import { initialMessagingStatus, messagingStatusAfterPhoneChange, optOutChange } from './contact-intake.ts';
import type { ContactRecord, DuplicateField } from './contacts.repo.ts';
import type { ContactInput, ContactPatch, NewContactInput } from './contacts.schemas.ts';

/** Checks a `properties` map; `create` also enforces required properties (decisions §5: on create only). */
export function checkProperties(
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

/** The sub-origins and funnel stages that some inputs name, and the organization's initial stage. */
export interface References {
  subOriginById: Map<string, string>;
  subOriginByKey: Map<string, string>;
  stageIds: Set<string>;
  initialStageId: string | null;
}

/** One statement per kind of reference the inputs name (none when they name none). */
export async function loadReferences(
  db: Kysely<DB>,
  orgId: string,
  inputs: readonly ContactPatch[],
  options: { initialStage: boolean },
): Promise<References> {
  const ids = [...new Set(inputs.flatMap((input) => (input.sub_origin_id ? [input.sub_origin_id] : [])))];
  const keys = [...new Set(inputs.flatMap((input) => (input.sub_origin_key ? [input.sub_origin_key] : [])))];
  const stageIds = [...new Set(inputs.flatMap((input) => (input.funnel_stage_id ? [input.funnel_stage_id] : [])))];
  const subOrigins =
    ids.length + keys.length === 0
      ? []
      : await db
          .selectFrom('sub_origins')
          .select(['id', 'key'])
          .where('org_id', '=', orgId)
          .where((eb) =>
            eb.or([
              ...(ids.length > 0 ? [eb('id', 'in', ids)] : []),
              ...(keys.length > 0 ? [eb('key', 'in', keys)] : []),
            ]),
          )
          .execute();
  const stages =
    stageIds.length === 0 && !options.initialStage
      ? []
      : await db
          .selectFrom('funnel_stages')
          .select(['id', 'is_initial'])
          .where('org_id', '=', orgId)
          .where((eb) =>
            eb.or([
              ...(stageIds.length > 0 ? [eb('id', 'in', stageIds)] : []),
              ...(options.initialStage ? [eb('is_initial', '=', true)] : []),
            ]),
          )
          .execute();
  return {
    subOriginById: new Map(subOrigins.map((row) => [row.id, row.id])),
    subOriginByKey: new Map(subOrigins.map((row) => [row.key, row.id])),
    stageIds: new Set(stages.filter((row) => stageIds.includes(row.id)).map((row) => row.id)),
    initialStageId: stages.find((row) => row.is_initial)?.id ?? null,
  };
}

/** sub_origin_id and/or sub_origin_key -> the sub-origin's id (null clears, undefined leaves alone). */
export function resolveSubOrigin(references: References, input: ContactInput): string | null | undefined {
  const { sub_origin_id: id, sub_origin_key: key } = input;
  const byId = id ? references.subOriginById.get(id) : undefined;
  if (id && !byId)
    throw validationError(['body', 'sub_origin_id'], 'Not a sub-origin of this organization', 'value_error', {
      input: id,
    });
  const byKey = key ? references.subOriginByKey.get(key) : undefined;
  if (key && !byKey)
    throw validationError(['body', 'sub_origin_key'], 'Not a sub-origin of this organization', 'value_error', {
      input: key,
    });
  if (byId && byKey && byId !== byKey) {
    throw validationError(['body', 'sub_origin_key'], 'Names another sub-origin than sub_origin_id', 'value_error', {
      input: key,
    });
  }
  if (byId || byKey) return byId ?? byKey;
  const given = 'sub_origin_id' in input || 'sub_origin_key' in input;
  return given ? null : undefined;
}

export function checkStage(references: References, stageId: string | null | undefined): void {
  if (stageId && !references.stageIds.has(stageId)) {
    throw validationError(['body', 'funnel_stage_id'], 'Not a funnel stage of this organization', 'value_error', {
      input: stageId,
    });
  }
}

/** The row `POST /v1/contacts` inserts (decisions §5: origin API, the initial stage when none is given). */
export function newContactRow(
  orgId: string,
  id: string,
  input: NewContactInput,
  references: References,
  now: Date,
): Insertable<ContactsTable> {
  return {
    org_id: orgId,
    id,
    first_name: input.first_name ?? null,
    last_name: input.last_name ?? null,
    email: input.email ?? null,
    phone: input.phone ?? null,
    country: input.country ?? null,
    city: input.city ?? null,
    social_handle: input.social_handle ?? null,
    // A batch item may name its origin (D230); everything else creates `API` contacts (decisions §5).
    origin: input.origin ?? 'API',
    sub_origin_id: resolveSubOrigin(references, input) ?? null,
    messaging_status: initialMessagingStatus(input.phone),
    funnel_stage_id: input.funnel_stage_id ?? references.initialStageId,
    owner_id: input.owner_id ?? null,
    // A batch item may create a contact already opted out (decisions §12 items take PATCH fields, §14).
    ...(input.opted_out ? optOutChange(true, now) : {}),
    created_at: now,
    updated_at: now,
  };
}

const PATCH_FIELDS = [
  'first_name',
  'last_name',
  'email',
  'country',
  'city',
  'social_handle',
  'owner_id',
  'funnel_stage_id',
] as const;

/** The columns a PATCH may set. */
export type ContactChanges = Partial<
  Pick<
    ContactRecord,
    | (typeof PATCH_FIELDS)[number]
    | 'sub_origin_id'
    | 'phone'
    | 'messaging_status'
    | 'opted_out'
    | 'opted_out_at'
    | 'updated_at'
  >
>;

/** The columns a PATCH sets on `current` (PATCH semantics: only the fields given). */
export function patchColumns(
  current: ContactRecord,
  patch: ContactPatch,
  references: References,
  now: Date,
): ContactChanges {
  const set: ContactChanges = {};
  for (const field of PATCH_FIELDS) {
    if (field in patch) set[field] = patch[field] ?? null;
  }
  const subOriginId = resolveSubOrigin(references, patch);
  if (subOriginId !== undefined) set.sub_origin_id = subOriginId;
  if ('phone' in patch) {
    const phone = patch.phone ?? null;
    set.phone = phone;
    const status = messagingStatusAfterPhoneChange(current.phone, phone);
    if (status) set.messaging_status = status;
  }
  // decisions §14: `opted_out_at` tells when the contact last opted out; the same value changes nothing.
  if (patch.opted_out !== undefined && patch.opted_out !== current.opted_out) {
    Object.assign(set, optOutChange(patch.opted_out, now));
  }
  if (Object.keys(patch).length > 0) set.updated_at = now;
  return set;
}

export interface DuplicateHolder {
  id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  social_handle: string | null;
}

/** contract: 409 `duplicate_contact`, naming the live contact that holds the value (null when none is left). */
export function duplicateContact(field: DuplicateField, holder: DuplicateHolder | undefined): ApiError {
  return new ApiError(409, {
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
