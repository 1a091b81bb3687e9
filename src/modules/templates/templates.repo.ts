// SQL for message templates. Every query filters by org_id; deleted templates are invisible to reads.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DB, TemplatesTable } from '../../db/schema.ts';

export type TemplateRow = Selectable<TemplatesTable>;

export interface TemplateFilter {
  status?: string[] | undefined;
  name?: string | undefined;
  language?: string | undefined;
  category?: string[] | undefined;
}

export const insertTemplate = (db: Kysely<DB>, row: Insertable<TemplatesTable>) =>
  db.insertInto('templates').values(row).returningAll().executeTakeFirstOrThrow();

export const findTemplate = (db: Kysely<DB>, orgId: string, templateId: string) =>
  db
    .selectFrom('templates')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', templateId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();

/** The components of an organization's templates by id, deleted ones too (a broadcast may outlive its template). */
export const findTemplateComponents = (db: Kysely<DB>, orgId: string, templateIds: string[]) =>
  db
    .selectFrom('templates')
    .select(['id', 'components'])
    .where('org_id', '=', orgId)
    .where('id', 'in', templateIds)
    .execute();

/** Operator paths (sandbox controls) name a template by id alone; ids are globally unique. */
export const findTemplateAnyOrg = (db: Kysely<DB>, templateId: string) =>
  db
    .selectFrom('templates')
    .selectAll()
    .where('id', '=', templateId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();

/** Newest first; `afterId` is the last id of the previous page (ids are time-ordered ULIDs). */
export function listTemplates(db: Kysely<DB>, orgId: string, filter: TemplateFilter, limit: number, afterId?: string) {
  let query = db
    .selectFrom('templates')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('deleted_at', 'is', null)
    .orderBy('id', 'desc')
    .limit(limit);
  if (filter.status?.length) query = query.where('status', 'in', filter.status);
  if (filter.category?.length) query = query.where('category', 'in', filter.category);
  if (filter.name !== undefined) query = query.where('name', '=', filter.name);
  if (filter.language !== undefined) query = query.where('language', '=', filter.language);
  if (afterId !== undefined) query = query.where('id', '<', afterId);
  return query.execute();
}

export const markSubmitted = (
  db: Kysely<DB>,
  orgId: string,
  templateId: string,
  patch: { platform_template_id: string; status: string; category: string; updated_at: Date },
) =>
  db
    .updateTable('templates')
    .set(patch)
    .where('org_id', '=', orgId)
    .where('id', '=', templateId)
    .returningAll()
    .executeTakeFirstOrThrow();

/** A submission the platform refused leaves nothing behind (contract: "stores nothing"). */
export const removeDraft = (db: Kysely<DB>, orgId: string, templateId: string) =>
  db
    .deleteFrom('templates')
    .where('org_id', '=', orgId)
    .where('id', '=', templateId)
    .where('status', '=', 'DRAFT')
    .execute();

export const softDeleteTemplate = (db: Kysely<DB>, orgId: string, templateId: string, at: Date) =>
  db
    .updateTable('templates')
    .set({ deleted_at: at, updated_at: at })
    .where('org_id', '=', orgId)
    .where('id', '=', templateId)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();

// ---- Webhook application (run inside the webhook's transaction) ----

/** The template a webhook names, locked until the webhook's transaction ends. Deleted ones still follow. */
export const lockTemplateByPlatformId = (
  db: Kysely<DB>,
  orgId: string,
  businessAccountId: string,
  platformTemplateId: string,
) =>
  db
    .selectFrom('templates')
    .select(['id', 'status', 'status_event_at'])
    .where('org_id', '=', orgId)
    .where('business_account_id', '=', businessAccountId)
    .where('platform_template_id', '=', platformTemplateId)
    .forUpdate()
    .execute();

export const updateTemplateById = (
  db: Kysely<DB>,
  orgId: string,
  templateId: string,
  patch: {
    status?: string;
    category?: string;
    rejected_reason?: string | null;
    status_event_at?: Date | null;
    updated_at: Date;
  },
) => db.updateTable('templates').set(patch).where('org_id', '=', orgId).where('id', '=', templateId).execute();

/**
 * A live template's platform identity, by id alone (the sandbox's operator control
 * `/admin/v1/sandbox/templates/{id}/review` carries no organization): the one global lookup answers only the
 * template's organization (the routing key, docs/scaling.md), and the identity is read within that organization.
 */
export async function findTemplateIdentity(db: Kysely<DB>, templateId: string) {
  const owner = await db.selectFrom('templates').select('org_id').where('id', '=', templateId).executeTakeFirst();
  if (!owner) return undefined;
  return db
    .selectFrom('templates')
    .select(['business_account_id', 'platform_template_id', 'name', 'language', 'category'])
    .where('org_id', '=', owner.org_id)
    .where('id', '=', templateId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}
