// Inbound platform webhooks -> domain changes: verify the signature over the raw bytes, parse, and apply each
// event once. Each event runs in its own short transaction that first records the event's identity in
// processed_webhook_events: a replayed or concurrently duplicated delivery finds the key taken and changes nothing.
// The real platform and the sandbox both come through `process` with raw bytes and a signature header.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { Clock } from '../lib/clock.ts';
import { parseWebhookEntries, parseWebhookJson } from './cloud/webhook-parser.ts';
import { verifySignature } from './cloud/webhook-signature.ts';
import type { PlatformEvent } from './platform.ts';
import {
  type ApplyOutcome,
  applyInboundMessage,
  applyMessageStatus,
  applyTemplateCategory,
  applyTemplateStatus,
  type MessageStatusListener,
} from './webhook-events.ts';

export interface WebhookProcessorDeps {
  db: Kysely<DB>;
  clock: Clock;
  /** The app secret that signs `X-Hub-Signature-256`. */
  appSecret: string;
  log: { warn(object: object, message: string): void };
  /** Records that follow message statuses besides the messages table (broadcast recipients). */
  messageStatusListeners?: MessageStatusListener[];
}

export type WebhookResult =
  | { ok: false; reason: 'missing_signature' | 'invalid_signature' | 'invalid_json' }
  | { ok: true; events: number; applied: number; stale: number; duplicates: number; unmatched: number };

class Unmatched extends Error {}

export function createWebhookProcessor(deps: WebhookProcessorDeps) {
  const { db, clock } = deps;
  const listeners = deps.messageStatusListeners ?? [];

  async function orgOfAccount(businessAccountId: string): Promise<string | undefined> {
    const row = await db
      .selectFrom('messaging_accounts')
      .select('org_id')
      .where('business_account_id', '=', businessAccountId)
      .executeTakeFirst();
    return row?.org_id;
  }

  async function liveChannel(orgId: string, phoneNumberId: string): Promise<string | undefined> {
    const row = await db
      .selectFrom('channels')
      .select('id')
      .where('org_id', '=', orgId)
      .where('phone_number_id', '=', phoneNumberId)
      .where('status', '=', 'live')
      .executeTakeFirst();
    return row?.id;
  }

  /** Records the event's identity and applies it in one transaction; 'duplicate' when it was applied before. */
  async function once(
    orgId: string,
    key: string,
    kind: string,
    apply: (trx: Kysely<DB>) => Promise<ApplyOutcome>,
  ): Promise<ApplyOutcome | 'duplicate'> {
    try {
      return await db.transaction().execute(async (trx) => {
        const recorded = await trx
          .insertInto('processed_webhook_events')
          .values({ org_id: orgId, event_key: key, kind, received_at: clock.now() })
          .onConflict((conflict) => conflict.columns(['org_id', 'event_key']).doNothing())
          .returning('event_key')
          .executeTakeFirst();
        if (!recorded) return 'duplicate';
        const outcome = await apply(trx);
        // Nothing here knows the event: keep no record, so that a later delivery of it can still apply.
        if (outcome === 'unmatched') throw new Unmatched();
        return outcome;
      });
    } catch (error) {
      if (error instanceof Unmatched) return 'unmatched';
      throw error;
    }
  }

  async function applyEvent(event: PlatformEvent, entryTime: Date | undefined): Promise<ApplyOutcome | 'duplicate'> {
    const orgId = await orgOfAccount(event.businessAccountId);
    if (!orgId) return 'unmatched';
    const now = clock.now();
    const seconds = entryTime ? Math.floor(entryTime.getTime() / 1000) : '';
    switch (event.kind) {
      case 'template_status':
        // The same review can legitimately happen twice (APPROVED, PAUSED, APPROVED): the entry time tells them apart.
        return once(
          orgId,
          `ts:${event.platformTemplateId}:${event.event}:${event.reason ?? ''}:${seconds}`,
          event.kind,
          (trx) => applyTemplateStatus(trx, orgId, event, entryTime, now),
        );
      case 'template_category':
        return once(orgId, `tc:${event.platformTemplateId}:${event.newCategory}:${seconds}`, event.kind, (trx) =>
          applyTemplateCategory(trx, orgId, event, now),
        );
      case 'message_status':
        // A message reaches each status once: the message id and status are the event's identity.
        return once(orgId, `ms:${event.platformMessageId}:${event.status}`, event.kind, async (trx) => {
          const outcomes = [await applyMessageStatus(trx, orgId, event, now)];
          for (const listener of listeners) outcomes.push(await listener(trx, orgId, event));
          if (outcomes.includes('applied')) return 'applied';
          return outcomes.includes('stale') ? 'stale' : 'unmatched';
        });
      case 'inbound_message': {
        const channelId = await liveChannel(orgId, event.phoneNumberId);
        if (!channelId) return 'unmatched';
        return once(orgId, `in:${event.platformMessageId}`, event.kind, (trx) =>
          applyInboundMessage(trx, orgId, channelId, event),
        );
      }
    }
  }

  return {
    /** Verifies, parses and applies one delivery. Throws only on a database fault (the platform will redeliver). */
    async process(rawBody: Buffer, signatureHeader: string | undefined): Promise<WebhookResult> {
      if (!signatureHeader) return { ok: false, reason: 'missing_signature' };
      if (!verifySignature(rawBody, signatureHeader, deps.appSecret)) return { ok: false, reason: 'invalid_signature' };
      let body: unknown;
      try {
        body = parseWebhookJson(rawBody.toString('utf8'));
      } catch {
        return { ok: false, reason: 'invalid_json' };
      }
      const result = { ok: true as const, events: 0, applied: 0, stale: 0, duplicates: 0, unmatched: 0 };
      // In delivery order: a batch that reports `delivered` then `read` for one message applies both.
      for (const entry of parseWebhookEntries(body)) {
        for (const event of entry.events) {
          result.events += 1;
          const outcome = await applyEvent(event, entry.time);
          if (outcome === 'applied') result.applied += 1;
          else if (outcome === 'stale') result.stale += 1;
          else if (outcome === 'duplicate') result.duplicates += 1;
          else {
            result.unmatched += 1;
            deps.log.warn(
              { kind: event.kind, businessAccountId: event.businessAccountId },
              'webhook event matched nothing',
            );
          }
        }
      }
      return result;
    },
  };
}

export type WebhookProcessor = ReturnType<typeof createWebhookProcessor>;
export type { MessageStatusListener } from './webhook-events.ts';

/** Dedupe records outlive the platform's redelivery window (it retries for days), then they go. */
export const PROCESSED_EVENT_RETENTION_MS = 14 * 24 * 60 * 60 * 1000;

export async function pruneProcessedEvents(db: Kysely<DB>, now: Date): Promise<void> {
  const before = new Date(now.getTime() - PROCESSED_EVENT_RETENTION_MS);
  await db.deleteFrom('processed_webhook_events').where('received_at', '<', before).execute();
}
