// POST /v1/templates/{id}/send: every check of decisions §7 in its order, then one transaction that writes the
// broadcast, its recipients (the worker's queue) and any new contacts. A refused request writes nothing.

import type { Static } from 'typebox';
import { ApiError, validationError } from '../../http/errors.ts';
import { type IdempotencyHold, withIdempotencyKey } from '../../http/idempotency.ts';
import { anywhere, type Loc, orderedBody, under } from '../../http/ordered-body.ts';
import { newId } from '../../lib/ids.ts';
import type { MediaCheck, MediaFetcher } from '../../messaging/media/media-fetcher.ts';
import type { MediaKind } from '../../messaging/media/media-types.ts';
import { contactsForPhones } from '../contacts/contact-intake.ts';
import { contactsById, contactsByPhone, type SendContact } from '../contacts/contact-lookup.repo.ts';
import { buildSendComponents, validateRecipientInput } from '../templates/send-requirements.ts';
import { channelFor, type SendableDeps, sendableTemplate, templateColumns } from '../templates/sendable.ts';
import { type AdmittedBroadcast, admitBroadcast } from './admission.ts';
import type { BroadcastsService } from './broadcasts.service.ts';
import { SendBody, type SendRecipient } from './send.schemas.ts';

const MEDIA_FETCH_CONCURRENCY = 8;

const checkSendBody = orderedBody(SendBody);

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

export interface SendDeps extends SendableDeps {
  broadcasts: BroadcastsService;
  media: MediaFetcher;
}

type Recipient = Static<typeof SendRecipient>;
type Broadcast = AdmittedBroadcast;

export function createSendService(deps: SendDeps) {
  const { db } = deps;

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
    raw: unknown,
    idempotency?: IdempotencyHold,
  ): Promise<Broadcast> {
    // decisions §7: template sendable; channel; recipient count; each recipient in order; 24-hour limit; balance.
    // The body's schema is run here, each part at its place in that list (D224).
    const body = checkSendBody(raw);
    const { template, components, catalogSendDefaults, requirements } = await sendableTemplate(deps, orgId, templateId);
    body.check((loc) => loc.length === 1 || under('body', 'channel_id')(loc));
    const { channel_id: named } = raw as Static<typeof SendBody>;
    // The recipients as given: one, or a list; a recipient with an issue of its own answers at its place.
    const given = (raw as Static<typeof SendBody>).recipients;
    const recipients: Recipient[] = Array.isArray(given)
      ? given
      : given !== null && typeof given === 'object'
        ? [given]
        : [];
    const recipientLoc = (index: number) =>
      Array.isArray(given)
        ? under('body', 'recipients', index)
        : (loc: Loc) => index === 0 && loc.length > 2 && under('body', 'recipients')(loc);
    const shaped = recipients.filter((_recipient, index) => body.valid(recipientLoc(index)));
    const ids = shaped.flatMap((recipient) => (recipient.contact_id ? [recipient.contact_id] : []));
    const byPhoneOnly = shaped.flatMap((recipient) =>
      recipient.phone && !recipient.contact_id ? [recipient.phone] : [],
    );
    const [channelId, byId, byPhone] = await Promise.all([
      channelFor(db, orgId, template.account_id, named),
      contactsById(db, orgId, ids),
      contactsByPhone(db, orgId, byPhoneOnly),
    ]);
    // The count (1–100) and every issue that is not a recipient's own. `recipients` is one recipient or a list: a
    // list with a bad item also fails the one-recipient branch (`dict_type` at `recipients`), and one bad
    // recipient the list branch (`list_type`); those issues are the recipient's, listed with it as the schema did.
    const otherBranch = Array.isArray(given) ? 'dict_type' : 'list_type';
    body.check(
      (loc, type) =>
        !(loc.length === 2 && type === otherBranch && recipients.length > 0) &&
        !recipients.some((_recipient, index) => recipientLoc(index)(loc)),
    );

    const mediaChecks = new Map<string, Promise<MediaCheck>>();
    const limit = concurrencyLimit(MEDIA_FETCH_CONCURRENCY);
    // Fetch every media URL the recipients name at once (a few at a time) rather than one after another; the
    // checks below still answer the first failure in recipient order.
    for (const recipient of shaped) {
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

    for (const [index, recipient] of recipients.entries()) {
      body.check(recipientLoc(index));
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
        optedOut: contact?.opted_out === true,
      });
    }

    body.check(anywhere);
    return admitBroadcast(db, {
      orgId,
      broadcast: { id: newId('bc'), ...templateColumns(template), channel_id: channelId, origin: 'api' },
      limit: 'refuse',
      idempotency,
      async recipients(trx) {
        // decisions §5: a phone that matches no contact creates one, with origin API. Before the account lock, so
        // the lock is held for the checks and the queue only; a refusal rolls these back too. In phone order, so
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
        return prepared.map((recipient) => ({
          contactId: recipient.contact?.id ?? (created.get(recipient.phone) as { id: string }).id,
          phone: recipient.phone,
          sendComponents: recipient.sendComponents,
          optedOut: recipient.optedOut,
        }));
      },
    });
  }

  const replay = (orgId: string) => (broadcastId: string) => deps.broadcasts.get(orgId, broadcastId);
  const answer = ({ result, replayed }: { result: Broadcast; replayed: boolean }) => ({ broadcast: result, replayed });

  return {
    send(
      orgId: string,
      templateId: string,
      // A SendBody, validated by `queue` at the body's places in the order of checks (D224).
      body: unknown,
      idempotencyKey?: string,
    ): Promise<{ broadcast: Broadcast; replayed: boolean }> {
      const request = { body: { template_id: templateId, body }, key: idempotencyKey };
      return withIdempotencyKey(db, orgId, request, (held) => queue(orgId, templateId, body, held), replay(orgId)).then(
        answer,
      );
    },
  };
}

export type SendService = ReturnType<typeof createSendService>;
