// POST /v1/contacts/batch-upsert (decisions §12): up to 100 contacts in one transaction, each updated (PATCH
// semantics) when its match value names a live contact, created otherwise. All or nothing; an error names its item.
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/errors.ts';
import type { DB } from '../../db/schema.ts';
import { ApiError } from '../../http/errors.ts';
import type { ValidationIssue } from '../../http/validation.ts';
import type { Definition } from '../properties/property-values.ts';
import type * as repo from './contacts.repo.ts';
import { findContact, findHolder } from './contacts.repo.ts';
import type { Contact, ContactBatch, ContactInput, ContactPatch } from './contacts.schemas.ts';

export interface BatchDeps {
  db: Kysely<DB>;
  createIn(
    trx: Kysely<DB>,
    orgId: string,
    input: ContactInput & { opted_out?: boolean | undefined },
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

const MATCH_INDEXES = { email: 'contacts_email_uq', phone: 'contacts_phone_uq' } as const;

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

/** An item's error, moved under `["body","items",index]` (422) or given `index` (409 and other detail objects). */
function atItem(error: unknown, index: number): unknown {
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

export async function batchUpsert(deps: BatchDeps, orgId: string, body: ContactBatch) {
  checkMatchValues(body);
  let current = 0;
  const run = () =>
    deps.db.transaction().execute(async (trx) => {
      const definitions = await deps.definitionsByKey(trx, orgId);
      const results: { index: number; result: 'created' | 'updated'; contact: Contact }[] = [];
      for (const [index, item] of body.items.entries()) {
        current = index;
        try {
          const holder = await findHolder(trx, orgId, body.match_on, item[body.match_on] as string);
          const existing = holder && (await findContact(trx, orgId, holder.id, { lock: true }));
          results.push(
            existing
              ? { index, result: 'updated', contact: await deps.updateIn(trx, orgId, existing, item, definitions) }
              : { index, result: 'created', contact: await deps.createIn(trx, orgId, item, definitions) },
          );
        } catch (error) {
          throw atItem(error, index);
        }
      }
      return { items: results };
    });
  for (let attempt = 1; ; attempt++) {
    try {
      // decisions §12: a concurrent batch (or create) that took one of our match values first makes our insert
      // fail on the unique index; a new attempt finds that contact and updates it, so no duplicate is created.
      return await run();
    } catch (error) {
      if (attempt < 3 && isUniqueViolation(error, MATCH_INDEXES[body.match_on])) continue;
      const item = body.items[current] ?? {};
      try {
        return await deps.guardDuplicates(orgId, item, () => Promise.reject(error));
      } catch (guarded) {
        throw guarded === error ? error : atItem(guarded, current);
      }
    }
  }
}
