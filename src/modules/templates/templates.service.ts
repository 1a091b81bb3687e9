// The rules of message templates: authoring checks, submission to the platform in the same call, soft delete with
// a best-effort platform delete, and the send-requirements analysis.
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/errors.ts';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound, validationError } from '../../http/errors.ts';
import { decodeCursor, encodeCursor } from '../../http/pagination.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import type { MessagingPlatform, TemplateCategory, TemplateComponent } from '../../messaging/platform.ts';
import { noPropertyKeys, type PropertyKeysSource } from './property-keys.ts';
import { analyzeTemplate, type CatalogSendDefaults, validateTemplateComponents } from './send-requirements.ts';
import * as repo from './templates.repo.ts';
import type { TemplateInput, TemplateListQuery } from './templates.schemas.ts';

export type { PropertyKeysSource } from './property-keys.ts';

export interface TemplatesDeps {
  db: Kysely<DB>;
  clock: Clock;
  platform: MessagingPlatform;
  propertyKeys?: PropertyKeysSource;
  log: { warn(object: object, message: string): void };
}

const LIST_SCOPE = 'templates:id:desc';

export function templateView(row: repo.TemplateRow) {
  return {
    id: row.id,
    business_account_id: row.business_account_id,
    platform_template_id: row.platform_template_id,
    name: row.name,
    language: row.language,
    category: row.category,
    status: row.status,
    components: row.components,
    catalog_send_defaults: row.catalog_send_defaults,
    rejected_reason: row.rejected_reason,
    quality_rating: row.quality_rating,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function createTemplatesService(deps: TemplatesDeps) {
  const { db, clock, platform } = deps;
  const propertyKeys = deps.propertyKeys ?? noPropertyKeys;

  async function resolveAccount(orgId: string, businessAccountId: string | undefined) {
    const accounts = await db
      .selectFrom('messaging_accounts')
      .select(['id', 'business_account_id'])
      .where('org_id', '=', orgId)
      .orderBy('id')
      .execute();
    const loc = ['body', 'business_account_id'];
    if (businessAccountId !== undefined) {
      const account = accounts.find((candidate) => candidate.business_account_id === businessAccountId);
      if (!account) {
        throw validationError(loc, 'Not a messaging account of this organization', 'value_error', {
          input: businessAccountId,
        });
      }
      return account;
    }
    // decisions §7: the account may be left out when the organization has exactly one.
    if (accounts.length === 1 && accounts[0]) return accounts[0];
    const msg =
      accounts.length === 0
        ? 'The organization has no messaging account'
        : 'Field required when the organization has more than one messaging account';
    throw validationError(loc, msg, 'missing');
  }

  async function get(orgId: string, templateId: string) {
    const row = await repo.findTemplate(db, orgId, templateId);
    if (!row) throw notFound();
    return row;
  }

  return {
    async list(orgId: string, query: TemplateListQuery) {
      const limit = query.limit ?? 50;
      const filter = {
        status: query.status,
        name: query.name,
        language: query.language?.replace(/-/g, '_'),
        category: query.category,
      };
      const afterId = query.cursor ? String(decodeCursor(query.cursor, LIST_SCOPE, filter)[0]) : undefined;
      const rows = await repo.listTemplates(db, orgId, filter, limit + 1, afterId);
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        items: page.map(templateView),
        next_cursor: rows.length > limit && last ? encodeCursor(LIST_SCOPE, filter, [last.id]) : null,
      };
    },

    get: async (orgId: string, templateId: string) => templateView(await get(orgId, templateId)),

    async create(orgId: string, input: TemplateInput) {
      const problems = validateTemplateComponents(input.components);
      if (problems.length > 0) throw new ApiError(422, problems);
      const account = await resolveAccount(orgId, input.business_account_id);
      const components = input.components as TemplateComponent[];
      const language = input.language.replace(/-/g, '_');
      const analysis = analyzeTemplate(components, { propertyKeys: [] });
      const now = clock.now();
      const id = newId('tpl');
      // Claim the name first (the unique index decides races), as a DRAFT: authored, not yet submitted.
      try {
        await repo.insertTemplate(db, {
          org_id: orgId,
          id,
          account_id: account.id,
          business_account_id: account.business_account_id,
          platform_template_id: null,
          name: input.name,
          language,
          category: input.category,
          status: 'DRAFT',
          components: JSON.stringify(components),
          parameter_format: analysis.parameter_format ?? 'positional',
          catalog_send_defaults: input.catalog_send_defaults ? JSON.stringify(input.catalog_send_defaults) : null,
          created_at: now,
          updated_at: now,
        });
      } catch (error) {
        if (isUniqueViolation(error, 'templates_name_uq')) {
          throw new ApiError(409, { code: 'duplicate_template', name: input.name, language });
        }
        throw error;
      }
      let result: Awaited<ReturnType<MessagingPlatform['submitTemplate']>>;
      try {
        result = await platform.submitTemplate({
          businessAccountId: account.business_account_id,
          name: input.name,
          language,
          category: input.category as TemplateCategory,
          components,
          parameterFormat: analysis.parameter_format ?? 'positional',
        });
      } catch (error) {
        await repo.removeDraft(db, orgId, id);
        throw error;
      }
      if (!result.ok) {
        // decisions §7: a refusal stores nothing (and neither does a platform that did not answer).
        await repo.removeDraft(db, orgId, id);
        if (result.unavailable) throw new ApiError(503, { code: 'platform_unavailable', reason: result.reason });
        throw new ApiError(422, { code: 'platform_rejected', reason: result.reason });
      }
      const row = await repo.markSubmitted(db, orgId, id, {
        platform_template_id: result.platformTemplateId,
        status: result.status.toUpperCase(),
        category: result.category,
        updated_at: clock.now(),
      });
      return templateView(row);
    },

    async remove(orgId: string, templateId: string) {
      const row = await repo.softDeleteTemplate(db, orgId, templateId, clock.now());
      if (!row) throw notFound();
      if (row.platform_template_id === null) return;
      // contract: best effort at the platform; whatever happens there, the local delete stands.
      try {
        const outcome = await platform.deleteTemplate({
          businessAccountId: row.business_account_id,
          name: row.name,
          platformTemplateId: row.platform_template_id,
        });
        if (!outcome.ok) deps.log.warn({ templateId, reason: outcome.reason }, 'platform template delete failed');
      } catch (error) {
        deps.log.warn({ templateId, err: error }, 'platform template delete failed');
      }
    },

    async sendRequirements(orgId: string, templateId: string) {
      // Two statements (the property keys come through their port), sent together: one round trip of waiting.
      const [row, keys] = await Promise.all([get(orgId, templateId), propertyKeys(db, orgId)]);
      return analyzeTemplate(row.components as TemplateComponent[], {
        propertyKeys: keys,
        catalogSendDefaults: row.catalog_send_defaults as CatalogSendDefaults | null,
      });
    },
  };
}

export type TemplatesService = ReturnType<typeof createTemplatesService>;
