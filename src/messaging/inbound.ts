// The platform's inbound callbacks (D333: "webhook" names only what goes to API clients): verify the signature over
// the raw bytes and parse them through the platform port's reader, record each event's identity once, and dispatch
// it by kind to the handlers the features registered in the wiring (templates, conversations, recipients,
// automation). Nothing here knows a feature or an adapter. Each event runs in its own short transaction that first records the
// event's identity in processed_webhook_events: a replayed or concurrently duplicated delivery finds the key taken
// and changes nothing. The real platform and the sandbox both come through `process` with raw bytes and a signature.

import { type Kysely, sql, type Transaction } from 'kysely';
import { transactionWithRetry } from '../db/retry-transaction.ts';
import type { DB } from '../db/schema.ts';
import type { Clock } from '../lib/clock.ts';
import type { InboundReader, PlatformEvent } from './platform.ts';

/** `stale`: known, but older than what is stored (nothing moves backwards); `unmatched`: nothing here names it. */
export type ApplyOutcome = 'applied' | 'stale' | 'unmatched';

export type PlatformEventKind = PlatformEvent['kind'];
export type PlatformEventOf<K extends PlatformEventKind> = Extract<PlatformEvent, { kind: K }>;

export interface EventContext {
  orgId: string;
  /** When this service received the event. */
  receivedAt: Date;
  /** The platform's time of the webhook entry, when it gave one. */
  occurredAt: Date | undefined;
  /** The live connected number an inbound message arrived at. */
  channelId?: string;
}

/** Applies one event inside the transaction that recorded it as processed. */
export type PlatformEventHandler<K extends PlatformEventKind> = (
  trx: Transaction<DB>,
  event: PlatformEventOf<K>,
  context: EventContext,
) => Promise<ApplyOutcome>;

/** What the features registered, by event kind; an event matches when any of its handlers matched it. */
export type PlatformEventHandlers = { [K in PlatformEventKind]?: PlatformEventHandler<K>[] };

/** Joins the handlers several features registered: an event kind's handlers run in the order given. */
export function joinHandlers(...sets: PlatformEventHandlers[]): PlatformEventHandlers {
  const joined: Record<string, unknown[]> = {};
  for (const set of sets) {
    for (const [kind, handlers] of Object.entries(set)) joined[kind] = [...(joined[kind] ?? []), ...(handlers ?? [])];
  }
  return joined as PlatformEventHandlers;
}

/** Who owns what the platform names: the connected accounts and numbers (implemented by the channels feature). */
export interface MessagingDirectory {
  organizationOfAccount(businessAccountId: string): Promise<string | undefined>;
  liveChannel(orgId: string, phoneNumberId: string): Promise<string | undefined>;
}

export interface InboundProcessorDeps {
  db: Kysely<DB>;
  clock: Clock;
  /** The app secret that signs `X-Hub-Signature-256`. */
  appSecret: string;
  log: { warn(object: object, message: string): void };
  directory: MessagingDirectory;
  /** The platform's verifier and parser (MessagingPlatform.inbound). */
  reader: InboundReader;
  handlers: PlatformEventHandlers;
}

export type InboundResult =
  | { ok: false; reason: 'missing_signature' | 'invalid_signature' | 'invalid_json' }
  | { ok: true; events: number; applied: number; stale: number; duplicates: number; unmatched: number };

class Unmatched extends Error {}

/** The event's identity for deduplication; undefined when it carries none of its own. */
function eventKey(event: PlatformEvent, occurredAt: Date | undefined): string {
  const seconds = occurredAt ? Math.floor(occurredAt.getTime() / 1000) : '';
  switch (event.kind) {
    case 'template_status':
      // The same review can legitimately happen twice (APPROVED, PAUSED, APPROVED): the entry time tells them apart.
      return `ts:${event.platformTemplateId}:${event.event}:${event.reason ?? ''}:${seconds}`;
    case 'template_category':
      return `tc:${event.platformTemplateId}:${event.newCategory}:${seconds}`;
    case 'message_status':
      // A message reaches each status once: the message id and status are the event's identity.
      return `ms:${event.platformMessageId}:${event.status}`;
    case 'inbound_message':
      return `in:${event.platformMessageId}`;
  }
}

export function createInboundProcessor(deps: InboundProcessorDeps) {
  const { db, clock, directory, reader } = deps;

  async function dispatch<K extends PlatformEventKind>(
    trx: Transaction<DB>,
    event: PlatformEventOf<K>,
    context: EventContext,
  ): Promise<ApplyOutcome> {
    const handlers = (deps.handlers[event.kind as K] ?? []) as PlatformEventHandler<K>[];
    const outcomes: ApplyOutcome[] = [];
    for (const handler of handlers) outcomes.push(await handler(trx, event, context));
    if (outcomes.includes('applied')) return 'applied';
    return outcomes.includes('stale') ? 'stale' : 'unmatched';
  }

  /** Records the event's identity and applies it in one transaction; 'duplicate' when it was applied before. */
  async function applyEvent(event: PlatformEvent, occurredAt: Date | undefined): Promise<ApplyOutcome | 'duplicate'> {
    const orgId = await directory.organizationOfAccount(event.businessAccountId);
    if (!orgId) return 'unmatched';
    const context: EventContext = { orgId, receivedAt: clock.now(), occurredAt };
    if (event.kind === 'inbound_message') {
      const channelId = await directory.liveChannel(orgId, event.phoneNumberId);
      if (!channelId) return 'unmatched';
      context.channelId = channelId;
    }
    try {
      // A status report and a group's record (or two reports) may deadlock: the victim is applied again.
      return await transactionWithRetry(db, async (trx) => {
        const recorded = await trx
          .insertInto('processed_webhook_events')
          .values({ org_id: orgId, event_key: eventKey(event, occurredAt), kind: event.kind, received_at: clock.now() })
          .onConflict((conflict) => conflict.columns(['org_id', 'event_key']).doNothing())
          .returning('event_key')
          .executeTakeFirst();
        if (!recorded) return 'duplicate';
        const outcome = await dispatch(trx, event, context);
        // Nothing here knows the event: keep no record, so that a later delivery of it can still apply.
        if (outcome === 'unmatched') throw new Unmatched();
        return outcome;
      });
    } catch (error) {
      if (error instanceof Unmatched) return 'unmatched';
      throw error;
    }
  }

  return {
    /** Verifies, parses and applies one delivery. Throws only on a database fault (the platform will redeliver). */
    async process(rawBody: Buffer, signatureHeader: string | undefined): Promise<InboundResult> {
      if (!signatureHeader) return { ok: false, reason: 'missing_signature' };
      if (!reader.verify(rawBody, signatureHeader, deps.appSecret)) return { ok: false, reason: 'invalid_signature' };
      const entries = reader.parse(rawBody);
      if (!entries) return { ok: false, reason: 'invalid_json' };
      const result = { ok: true as const, events: 0, applied: 0, stale: 0, duplicates: 0, unmatched: 0 };
      // In delivery order: a batch that reports `delivered` then `read` for one message applies both.
      for (const entry of entries) {
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
              'platform event matched nothing',
            );
          }
        }
      }
      return result;
    },
  };
}

export type InboundProcessor = ReturnType<typeof createInboundProcessor>;

/**
 * One batch of retention: at most `batch` dedupe records older than `retentionMs` (they outlive the platform's days
 * of redelivery, then they go); answers how many went.
 */
export async function pruneProcessedEvents(
  db: Kysely<DB>,
  now: Date,
  retentionMs: number,
  batch: number,
): Promise<number> {
  const before = new Date(now.getTime() - retentionMs);
  const deleted = await sql`
    delete from processed_webhook_events p
    using (
      select org_id, event_key from processed_webhook_events where received_at < ${before} limit ${batch}
    ) old
    where p.org_id = old.org_id and p.event_key = old.event_key
  `.execute(db);
  return Number(deleted.numAffectedRows ?? 0);
}
