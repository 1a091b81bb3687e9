// POST /v1/templates/{id}/send: every check of decisions §7 in its order, then one transaction that writes the
// broadcast, its recipients (the worker's queue) and any new contacts. A refused request writes nothing.

import { type Kysely, sql } from 'kysely';
import type { Static } from 'typebox';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound, validationError } from '../../http/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { MediaCheck, MediaFetcher } from '../../messaging/media/media-fetcher.ts';
import type { MediaKind } from '../../messaging/media/media-types.ts';
import type { TemplateComponent } from '../../messaging/platform.ts';
import {
  analyzeTemplate,
  buildSendComponents,
  type CatalogSendDefaults,
  validateRecipientInput,
} from '../templates/send-requirements.ts';
import { findTemplate } from '../templates/templates.repo.ts';
import { selectBroadcasts } from './broadcasts.repo.ts';
import { broadcastView } from './broadcasts.service.ts';
import { completeIdempotencyKey } from './idempotency.ts';
import type { SendBody, SendRecipient } from './send.schemas.ts';
import { contactsById, contactsByPhone, ensureContactsForPhones, type SendContact } from './send-contacts.ts';

export const MAX_RECIPIENTS = 100;
const MEDIA_FETCH_CONCURRENCY = 8;

/** Runs at most `max` of the given tasks at a time. */
function concurrencyLimit(max: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(work: () => Promise<T>): Promise<T> => {
    if (active >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    active += 1;
    try {
      return await work();
    } finally {
      active -= 1;
      waiting.shift()?.();
    }
  };
}

export interface SendDeps {
  db: Kysely<DB>;
  media: MediaFetcher;
  /** The organization's custom property keys (named placeholders equal to one resolve from the contact). */
  propertyKeys(orgId: string): Promise<readonly string[]>;
}

type Recipient = Static<typeof SendRecipient>;

function priceFor(prices: unknown, category: string): number {
  const price = (prices as Record<string, unknown> | null)?.[category];
  return typeof price === 'number' && price >= 0 ? price : 1;
}

export function createSendService(deps: SendDeps) {
  const { db } = deps;

  async function sendableTemplate(orgId: string, templateId: string) {
    const template = await findTemplate(db, orgId, templateId);
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
    const requirements = analyzeTemplate(components, {
      propertyKeys: await deps.propertyKeys(orgId),
      catalogSendDefaults,
    });
    if (requirements.never_sendable_reason) {
      throw new ApiError(422, { code: 'template_not_sendable', reason: requirements.never_sendable_reason });
    }
    return { template, components, catalogSendDefaults, requirements };
  }

  async function channelFor(orgId: string, accountId: string, channelId: string | undefined) {
    const live = await db
      .selectFrom('channels')
      .select(['id', 'phone'])
      .where('org_id', '=', orgId)
      .where('account_id', '=', accountId)
      .where('status', '=', 'live')
      .orderBy('created_at')
      .execute();
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
      throw new ApiError(400, {
        code: 'invalid_channel',
        reason: "the template's messaging account has no live number",
      });
    }
    throw new ApiError(400, { code: 'channel_id_required', channel_ids: live.map((channel) => channel.id) });
  }

  function checkMedia(
    checks: Map<string, Promise<MediaCheck>>,
    limit: <T>(work: () => Promise<T>) => Promise<T>,
    url: string,
    kind: MediaKind,
  ): Promise<MediaCheck> {
    // Each distinct URL is fetched once per request, whatever number of recipients share it.
    const key = `${kind} ${url}`;
    let check = checks.get(key);
    if (!check) {
      check = limit(() => deps.media.check(url, kind));
      checks.set(key, check);
    }
    return check;
  }

  return {
    /** Validates and queues a send; an idempotency key (claimed by the caller) is completed in the same transaction. */
    async send(
      orgId: string,
      templateId: string,
      body: Static<typeof SendBody>,
      idempotency?: { key: string; token: string },
    ) {
      const { template, components, catalogSendDefaults, requirements } = await sendableTemplate(orgId, templateId);
      const channelId = await channelFor(orgId, template.account_id, body.channel_id);

      const recipients: Recipient[] = Array.isArray(body.recipients) ? body.recipients : [body.recipients];
      if (recipients.length === 0 || recipients.length > MAX_RECIPIENTS) {
        const tooMany = recipients.length > MAX_RECIPIENTS;
        throw validationError(
          ['body', 'recipients'],
          tooMany ? `List should have at most ${MAX_RECIPIENTS} items` : 'List should have at least 1 item',
          tooMany ? 'too_long' : 'too_short',
          { ctx: { field_type: 'List', [tooMany ? 'max_length' : 'min_length']: tooMany ? MAX_RECIPIENTS : 1 } },
        );
      }

      const byId = await contactsById(
        db,
        orgId,
        recipients.flatMap((recipient) => (recipient.contact_id ? [recipient.contact_id] : [])),
      );
      const byPhone = await contactsByPhone(
        db,
        orgId,
        recipients.flatMap((recipient) => (recipient.phone && !recipient.contact_id ? [recipient.phone] : [])),
      );
      const mediaChecks = new Map<string, Promise<MediaCheck>>();
      const limit = concurrencyLimit(MEDIA_FETCH_CONCURRENCY);
      // Fetch every media URL the recipients name at once (a few at a time) rather than one after another; the
      // checks below still answer the first failure in recipient order.
      for (const recipient of recipients) {
        const contact = recipient.contact_id
          ? byId.get(recipient.contact_id)
          : (byPhone.get(recipient.phone ?? '') ?? { id: '', phone: recipient.phone ?? null });
        const checked = validateRecipientInput(requirements, recipient, contact ?? null);
        if (!checked.ok) continue;
        for (const surface of requirements.media) {
          const url = checked.parameters.media[surface.token];
          if (url) void checkMedia(mediaChecks, limit, url, surface.type);
        }
      }
      const seenPhones = new Map<string, number>();
      const prepared: { phone: string; contact: SendContact | null; sendComponents: unknown }[] = [];

      for (const [index, recipient] of recipients.entries()) {
        if ((recipient.contact_id === undefined) === (recipient.phone === undefined)) {
          throw validationError(['body', 'recipients', index], 'Give either contact_id or phone', 'value_error', {
            input: recipient,
          });
        }
        let contact: SendContact | null = null;
        let phone: string;
        if (recipient.contact_id !== undefined) {
          contact = byId.get(recipient.contact_id) ?? null;
          if (!contact) throw new ApiError(404, { code: 'contact_not_found', index, contact_id: recipient.contact_id });
          if (!contact.phone) {
            throw new ApiError(422, { code: 'contact_has_no_phone', index, contact_id: recipient.contact_id });
          }
          phone = contact.phone;
        } else {
          phone = recipient.phone as string;
          contact = byPhone.get(phone) ?? { id: '', phone };
        }
        // One person once per send: a repeated phone would message them twice.
        const earlier = seenPhones.get(phone);
        if (earlier !== undefined)
          throw new ApiError(422, { code: 'duplicate_recipient', index, first_index: earlier, phone });
        seenPhones.set(phone, index);

        const checked = validateRecipientInput(requirements, recipient, contact);
        if (!checked.ok) throw new ApiError(422, { ...checked.error, index });
        for (const surface of requirements.media) {
          const url = checked.parameters.media[surface.token];
          if (!url) continue;
          const media = await checkMedia(mediaChecks, limit, url, surface.type);
          if (!media.ok)
            throw new ApiError(422, { code: media.code, index, token: surface.token, url, reason: media.reason });
        }
        prepared.push({
          phone,
          contact: contact?.id ? contact : null,
          sendComponents: buildSendComponents(components, checked.parameters, { catalogSendDefaults }),
        });
      }

      const broadcastId = newId('bc');
      await db.transaction().execute(async (trx) => {
        // The account row lock serialises sends of one account, so two sends that each fit the 24-hour limit or
        // the balance but together do not cannot both pass.
        const account = await trx
          .selectFrom('messaging_accounts')
          .select(['balance', 'prices', 'messaging_limit_24h'])
          .where('org_id', '=', orgId)
          .where('id', '=', template.account_id)
          .forUpdate()
          .executeTakeFirstOrThrow();
        const phones = prepared.map((recipient) => recipient.phone);
        // decisions §7: distinct phones messaged from this account in the trailing 24 hours, counted in the
        // database (the window can hold many thousands of recipients), and how many of this batch are among them.
        const window = await trx
          .selectFrom('broadcast_recipients')
          .select([
            sql<number>`count(distinct phone)::int`.as('used'),
            sql<number>`count(distinct phone) filter (where phone = any(${phones}))::int`.as('repeated'),
          ])
          .where('org_id', '=', orgId)
          .where('account_id', '=', template.account_id)
          .where('queued_at', '>', sql<Date>`now() - interval '24 hours'`)
          .where('status', 'not in', ['failed', 'cancelled'])
          .executeTakeFirstOrThrow();
        const remaining = Math.max(0, account.messaging_limit_24h - Number(window.used));
        const fresh = phones.length - Number(window.repeated);
        if (fresh > remaining) {
          throw new ApiError(409, { code: 'messaging_limit_exceeded', remaining, limit: account.messaging_limit_24h });
        }
        const price = priceFor(account.prices, template.category);
        if (Number(account.balance) + 1e-9 < price) {
          throw new ApiError(402, { code: 'messaging_insufficient_balance', balance: Number(account.balance), price });
        }

        const created = await ensureContactsForPhones(
          trx,
          orgId,
          prepared.filter((recipient) => !recipient.contact).map((recipient) => recipient.phone),
        );
        await trx
          .insertInto('broadcasts')
          .values({
            org_id: orgId,
            id: broadcastId,
            template_id: template.id,
            template_name: template.name,
            template_language: template.language,
            template_category: template.category,
            account_id: template.account_id,
            channel_id: channelId,
            requested: prepared.length,
            origin: 'api',
            idempotency_key: idempotency?.key ?? null,
          })
          .execute();
        await trx
          .insertInto('broadcast_recipients')
          .values(
            prepared.map((recipient, position) => ({
              org_id: orgId,
              broadcast_id: broadcastId,
              position,
              account_id: template.account_id,
              channel_id: channelId,
              contact_id: recipient.contact?.id ?? (created.get(recipient.phone) as string),
              phone: recipient.phone,
              send_components: JSON.stringify(recipient.sendComponents),
            })),
          )
          .execute();
        if (idempotency) await completeIdempotencyKey(trx, orgId, idempotency, broadcastId);
      });
      const row = await selectBroadcasts(db, orgId).where('broadcasts.id', '=', broadcastId).executeTakeFirstOrThrow();
      return broadcastView(row);
    },
  };
}

export type SendService = ReturnType<typeof createSendService>;
