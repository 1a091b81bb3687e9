// What every send checks first (decisions §7): the template is sendable and the channel is a live number of the
// template's messaging account. Sends, retries (§13) and audience broadcasts (§16) all start here.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound } from '../../http/errors.ts';
import type { TemplateComponent } from '../../messaging/platform.ts';
import { liveNumbersOfAccount } from '../channels/channels.repo.ts';
import { analyzeTemplate, type CatalogSendDefaults } from './send-requirements.ts';
import { findTemplate } from './templates.repo.ts';

export interface SendableDeps {
  db: Kysely<DB>;
  /** The organization's custom property keys (named placeholders equal to one resolve from the contact). */
  propertyKeys(orgId: string): Promise<readonly string[]>;
}

/** The template with its send requirements; 404, 409 when it is not APPROVED, 422 when it can never be sent. */
export async function sendableTemplate(deps: SendableDeps, orgId: string, templateId: string) {
  // The organization's property keys are read beside the template (one round trip less before the send).
  const [template, propertyKeys] = await Promise.all([
    findTemplate(deps.db, orgId, templateId),
    deps.propertyKeys(orgId),
  ]);
  if (!template) throw notFound();
  // contract: only an APPROVED template can be sent (409); one that can never be sent is a 422.
  if (template.status !== 'APPROVED') {
    throw new ApiError(409, {
      code: 'template_not_sendable',
      status: template.status,
      reason: `the template is ${template.status}; only APPROVED templates can be sent`,
    });
  }
  const components = template.components as unknown as TemplateComponent[];
  const catalogSendDefaults = (template.catalog_send_defaults ?? null) as CatalogSendDefaults | null;
  const requirements = analyzeTemplate(components, { propertyKeys, catalogSendDefaults });
  if (requirements.never_sendable_reason) {
    throw new ApiError(422, { code: 'template_not_sendable', reason: requirements.never_sendable_reason });
  }
  return { template, components, catalogSendDefaults, requirements };
}

export type SendableTemplate = Awaited<ReturnType<typeof sendableTemplate>>;

/** The channel to send from: the one named (a live number of the account) or the account's only live number. */
export async function channelFor(
  db: Kysely<DB>,
  orgId: string,
  accountId: string,
  channelId: string | undefined,
): Promise<string> {
  const live = await liveNumbersOfAccount(db, orgId, accountId);
  if (channelId !== undefined) {
    if (!live.some((channel) => channel.id === channelId)) {
      throw new ApiError(400, {
        code: 'invalid_channel',
        channel_id: channelId,
        reason: "not a live number of the template's messaging account",
      });
    }
    return channelId;
  }
  if (live.length === 1) return (live[0] as { id: string }).id;
  if (live.length === 0) {
    throw new ApiError(400, { code: 'invalid_channel', reason: "the template's messaging account has no live number" });
  }
  throw new ApiError(400, { code: 'channel_id_required', channel_ids: live.map((channel) => channel.id) });
}

/** The broadcast row's template columns (a snapshot: the broadcast keeps them if the template changes). */
export const templateColumns = (template: SendableTemplate['template']) => ({
  template_id: template.id,
  template_name: template.name,
  template_language: template.language,
  template_category: template.category,
  account_id: template.account_id,
});
