// POST /v1/templates/{id}/send: every check of decisions §7 in its order, then one transaction that writes the
// broadcast, its recipients (the worker's queue) and any new contacts. A refused request writes nothing.

import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound, validationError } from '../../http/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { MediaCheck, MediaFetcher } from '../../messaging/media/media-fetcher.ts';
import type { MediaKind } from '../../messaging/media/media-types.ts';
import type { TemplateComponent } from '../../messaging/platform.ts';
import { liveNumbersOfAccount } from '../channels/channels.repo.ts';
import { contactsForPhones } from '../contacts/contact-intake.ts';
import { contactsById, contactsByPhone, type SendContact } from '../contacts/contact-lookup.repo.ts';
import {
  analyzeTemplate,
  buildSendComponents,
  type CatalogSendDefaults,
  validateRecipientInput,
} from '../templates/send-requirements.ts';
import { findTemplate } from '../templates/templates.repo.ts';
import { broadcastView } from './broadcast-view.ts';
import { insertBroadcast } from './broadcasts.repo.ts';
import type { BroadcastsService } from './broadcasts.service.ts';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey, requestHash } from './idempotency.ts';
import { priceOf } from './recipient-rules.ts';
import { queueRecipients, recordFailedAtOnce } from './recipients.repo.ts';
import { queueRetry } from './retry.ts';
import type { SendBody, SendRecipient } from './send.schemas.ts';
import { lockAccount, recentPhones } from './sends.repo.ts';

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
  broadcasts: BroadcastsService;
  media: MediaFetcher;
  /** The organization's custom property keys (named placeholders equal to one resolve from the contact). */
  propertyKeys(orgId: string): Promise<readonly string[]>;
}

type Recipient = Static<typeof SendRecipient>;
type Broadcast = ReturnType<typeof broadcastView>;

export function createSendService(deps: SendDeps) {
  const { db } = deps;

  async function sendableTemplate(orgId: string, templateId: string) {
    // The organization's property keys are read beside the template (one round trip less before the send).
    const [template, propertyKeys] = await Promise.all([findTemplate(db, orgId, templateId), deps.propertyKeys(orgId)]);
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
      propertyKeys,
      catalogSendDefaults,
    });
    if (requirements.never_sendable_reason) {
      throw new ApiError(422, { code: 'template_not_sendable', reason: requirements.never_sendable_reason });
    }
    return { template, components, catalogSendDefaults, requirements };
  }

  async function channelFor(orgId: string, accountId: string, channelId: string | undefined) {
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

  /** Validates and queues a send; a claimed idempotency key is completed in the same transaction. */
  async function queue(
    orgId: string,
    templateId: string,
    body: Static<typeof SendBody>,
    idempotency?: { key: string; token: string },
  ): Promise<Broadcast> {
    const { template, components, catalogSendDefaults, requirements } = await sendableTemplate(orgId, templateId);
    const recipients: Recipient[] = Array.isArray(body.recipients) ? body.recipients : [body.recipients];
    // The channel and the recipients' contacts are read at once (a list of the wrong length reads no contacts);
    // the channel's refusal still comes first.
    const fits = recipients.length > 0 && recipients.length <= MAX_RECIPIENTS;
    const ids = fits ? recipients.flatMap((recipient) => (recipient.contact_id ? [recipient.contact_id] : [])) : [];
    const byPhoneOnly = fits
      ? recipients.flatMap((recipient) => (recipient.phone && !recipient.contact_id ? [recipient.phone] : []))
      : [];
    const [channelId, byId, byPhone] = await Promise.all([
      channelFor(orgId, template.account_id, body.channel_id),
      contactsById(db, orgId, ids),
      contactsByPhone(db, orgId, byPhoneOnly),
    ]);
    if (!fits) {
      const tooMany = recipients.length > MAX_RECIPIENTS;
      throw validationError(
        ['body', 'recipients'],
        tooMany ? `List should have at most ${MAX_RECIPIENTS} items` : 'List should have at least 1 item',
        tooMany ? 'too_long' : 'too_short',
        { ctx: { field_type: 'List', [tooMany ? 'max_length' : 'min_length']: tooMany ? MAX_RECIPIENTS : 1 } },
      );
    }

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
    const prepared: { phone: string; contact: SendContact | null; sendComponents: unknown; optedOut: boolean }[] = [];
    // decisions §14: only MARKETING sends skip opted-out contacts; UTILITY and AUTHENTICATION still reach them.
    const honoursOptOut = template.category === 'MARKETING';

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
        optedOut: honoursOptOut && contact?.opted_out === true,
      });
    }

    const broadcastId = newId('bc');
    return db.transaction().execute(async (trx) => {
      // decisions §5: a phone that matches no contact creates one, with origin API. Before the account lock, so the
      // lock is held for the checks and the queue only; a refusal below rolls these back too. In phone order, so
      // concurrent sends that create the same contacts take their index entries in one order.
      const created = await contactsForPhones(
        trx,
        orgId,
        prepared
          .filter((recipient) => !recipient.contact)
          .map((recipient) => ({ phone: recipient.phone }))
          .sort((a, b) => (a.phone < b.phone ? -1 : a.phone > b.phone ? 1 : 0)),
        // The lookup by phone above found none of these.
        { origin: 'API', knownMissing: true },
      );
      const account = await lockAccount(trx, orgId, template.account_id);
      // decisions §14: opted-out recipients are never handed off, so they count neither against the limit nor
      // the balance (their rows are `failed`, which recentPhones does not count either).
      const phones = prepared.filter((recipient) => !recipient.optedOut).map((recipient) => recipient.phone);
      const window = await recentPhones(trx, orgId, template.account_id, phones);
      const remaining = Math.max(0, account.messaging_limit_24h - window.used);
      const fresh = phones.length - window.repeated;
      if (fresh > remaining) {
        throw new ApiError(409, { code: 'messaging_limit_exceeded', remaining, limit: account.messaging_limit_24h });
      }
      const price = priceOf(account.prices, template.category);
      if (phones.length > 0 && Number(account.balance) + 1e-9 < price) {
        throw new ApiError(402, { code: 'messaging_insufficient_balance', balance: Number(account.balance), price });
      }

      const row = {
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
      };
      const { created_at } = await insertBroadcast(trx, row);
      const failed = await queueRecipients(
        trx,
        orgId,
        { id: broadcastId, accountId: template.account_id, channelId },
        prepared.map((recipient) => ({
          contactId: recipient.contact?.id ?? (created.get(recipient.phone) as { id: string }).id,
          phone: recipient.phone,
          sendComponents: recipient.sendComponents,
          failure: recipient.optedOut ? 'opted_out' : undefined,
        })),
      );
      await recordFailedAtOnce(trx, failed);
      if (idempotency) await completeIdempotencyKey(trx, orgId, idempotency, broadcastId);
      // The broadcast as it stands at the commit (nothing is handed off before it): no read after the commit.
      return broadcastView({ ...row, stored_status: null, retry_of: null, created_at, sent: 0, failed: failed.length });
    });
  }

  /**
   * decisions §7, Stripe's semantics: without a key, run the work. With an `Idempotency-Key`, the key is claimed
   * first in its own transaction: a replay answers the stored broadcast (`replayed`); a refusal (or a fault before
   * the commit) queued nothing, so the key is released for a corrected request. A key that names a broadcast is
   * never released.
   */
  async function idempotent(
    orgId: string,
    request: unknown,
    idempotencyKey: string | undefined,
    work: (held?: { key: string; token: string }) => Promise<Broadcast>,
  ): Promise<{ broadcast: Broadcast; replayed: boolean }> {
    if (idempotencyKey === undefined) return { broadcast: await work(), replayed: false };
    const claim = await claimIdempotencyKey(db, orgId, idempotencyKey, requestHash(request));
    if (claim.kind === 'replay')
      return { broadcast: await deps.broadcasts.get(orgId, claim.broadcastId), replayed: true };
    const held = { key: idempotencyKey, token: claim.token };
    try {
      return { broadcast: await work(held), replayed: false };
    } catch (error) {
      await releaseIdempotencyKey(db, orgId, held);
      throw error;
    }
  }

  return {
    send(
      orgId: string,
      templateId: string,
      body: Static<typeof SendBody>,
      idempotencyKey?: string,
    ): Promise<{ broadcast: Broadcast; replayed: boolean }> {
      return idempotent(orgId, { template_id: templateId, body }, idempotencyKey, (held) =>
        queue(orgId, templateId, body, held),
      );
    },

    /** decisions §13: a retry of a broadcast's failures is a send, with the same Idempotency-Key semantics. */
    retry(
      orgId: string,
      broadcastId: string,
      body: { error_codes?: string[] | undefined },
      idempotencyKey?: string,
    ): Promise<{ broadcast: Broadcast; replayed: boolean }> {
      return idempotent(orgId, { retry_of: broadcastId, body }, idempotencyKey, async (held) => {
        const retryId = await queueRetry(
          { db, sendableTemplate, channelFor },
          orgId,
          broadcastId,
          body.error_codes,
          held && ((trx, id) => completeIdempotencyKey(trx, orgId, held, id)),
        );
        return deps.broadcasts.get(orgId, retryId);
      });
    },
  };
}

export type SendService = ReturnType<typeof createSendService>;
