// POST /v1/broadcasts (decisions §16): the checks before the 202, in order — the template sendable, the channel, the
// body (the audience through the contact list's own filters, `send_at`, the shared variables), media (each URL
// fetched once), the balance for one message — then the admission step writes the broadcast without recipients.
// No work per contact: the worker starts it (at `send_at`) and adds its recipients in chunks.
import type { Static } from 'typebox';
import { ApiError, validationError } from '../../http/errors.ts';
import { type IdempotencyHold, withIdempotencyKey } from '../../http/idempotency.ts';
import { anywhere, orderedBody, under } from '../../http/ordered-body.ts';
import { newId } from '../../lib/ids.ts';
import type { MediaFetcher } from '../../messaging/media/media-fetcher.ts';
import { audienceCondition } from '../contacts/contact-audience.ts';
import { audienceComponents } from '../recipients/audience-components.ts';
import { channelFor, type SendableDeps, sendableTemplate, templateColumns } from '../templates/sendable.ts';
import { type AdmittedBroadcast, admitBroadcast } from './admission.ts';
import { AudienceBroadcastBody, SEND_AT_MAX_DAYS } from './audience.schemas.ts';
import type { BroadcastsService } from './broadcasts.service.ts';

export interface AudienceDeps extends SendableDeps {
  broadcasts: BroadcastsService;
  media: MediaFetcher;
  now(): Date;
}

type Body = Static<typeof AudienceBroadcastBody>;

const checkBody = orderedBody(AudienceBroadcastBody);

/** A `send_at` this far in the past still means "now" (the client's clock and the request's travel). */
const SEND_AT_SLACK_MS = 60_000;

/** The shared recipient fields of the body (what a send recipient carries besides its address). */
export function sharedInput(body: Body) {
  const { template_id: _t, audience: _a, channel_id: _c, send_at: _s, name: _n, ...input } = body;
  return input;
}

export function createAudienceService(deps: AudienceDeps) {
  const { db } = deps;

  function checkSendAt(sendAt: string | undefined): Date | null {
    if (sendAt === undefined) return null;
    const at = new Date(sendAt);
    const now = deps.now().getTime();
    if (at.getTime() < now - SEND_AT_SLACK_MS || at.getTime() > now + SEND_AT_MAX_DAYS * 86_400_000) {
      throw validationError(['body', 'send_at'], `Must be from now to ${SEND_AT_MAX_DAYS} days ahead`, 'value_error', {
        input: sendAt,
      });
    }
    return at;
  }

  async function queue(orgId: string, raw: unknown, idempotency?: IdempotencyHold): Promise<AdmittedBroadcast> {
    // The body's schema at its places in the order of checks (D224): `template_id` with the template, `channel_id`
    // with the channel, the rest as the body.
    const checked = checkBody(raw);
    checked.check((loc) => loc.length === 1 || under('body', 'template_id')(loc));
    const body = raw as Body;
    const { template, components, catalogSendDefaults, requirements } = await sendableTemplate(
      deps,
      orgId,
      body.template_id,
    );
    checked.check(under('body', 'channel_id'));
    const channelId = await channelFor(db, orgId, template.account_id, body.channel_id);
    checked.check(anywhere);
    await audienceCondition(db, orgId, body.audience);
    const sendAt = checkSendAt(body.send_at);
    const input = sharedInput(body);
    // Tokens that no contact can fill (no shared value, no contact field or property of that name) are refused here:
    // every recipient would fail.
    const filled = audienceComponents(requirements, components, input, catalogSendDefaults);
    if (!filled.ok) throw new ApiError(422, filled.error);
    for (const surface of requirements.media) {
      const url = filled.parameters.media[surface.token];
      if (!url) continue;
      const media = await deps.media.check(url, surface.type);
      if (!media.ok) throw new ApiError(422, { code: media.code, token: surface.token, url, reason: media.reason });
    }
    return admitBroadcast(db, {
      orgId,
      broadcast: {
        id: newId('bc'),
        ...templateColumns(template),
        channel_id: channelId,
        origin: 'api',
        name: body.name ?? null,
        audience: JSON.stringify(body.audience),
        audience_input: JSON.stringify(input),
        send_at: sendAt,
        // decisions §16: without send_at it is never `scheduled`; the worker starts it at once.
        phase: sendAt ? 'scheduled' : 'preparing',
      },
      limit: 'pace',
      idempotency,
      recipients: async () => [],
    });
  }

  return {
    /** `body` is an AudienceBroadcastBody, validated at its places in the order of checks (D224). */
    create(orgId: string, body: unknown, idempotencyKey?: string) {
      return withIdempotencyKey(
        db,
        orgId,
        { body: { audience_broadcast: body }, key: idempotencyKey },
        (held) => queue(orgId, body, held),
        (broadcastId) => deps.broadcasts.get(orgId, broadcastId),
      ).then(({ result, replayed }) => ({ broadcast: result, replayed }));
    },
  };
}

export type AudienceService = ReturnType<typeof createAudienceService>;
