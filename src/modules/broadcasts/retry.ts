// POST /v1/broadcasts/{id}/retry (decisions §13): a new broadcast of the original's failed recipients whose failure
// can succeed on another try, with their stored send components, under every rule and refusal of a send: the same
// admission and Idempotency-Key semantics as a send, in a service of its own (D336: a send never loads it).
import { type Kysely, sql } from 'kysely';
import { isUniqueViolation } from '../../db/errors.ts';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound } from '../../http/errors.ts';
import { type IdempotencyHold, withIdempotencyKey } from '../../http/idempotency.ts';
import { newId } from '../../lib/ids.ts';
import { type ContactToken, componentsFiller } from '../recipients/audience-components.ts';
import { channelFor, type SendableDeps, sendableTemplate, templateColumns } from '../templates/sendable.ts';
import { type AdmittedBroadcast, admitBroadcast } from './admission.ts';
import type { BroadcastsService } from './broadcasts.service.ts';

/** decisions §13: failures another try cannot fix. */
const FINAL_ERRORS = ['opted_out', 'not_on_network'];
/** decisions §13: a hand-off whose answer was lost may have reached the contact: retried only when named (D222). */
const UNCONFIRMED = 'handoff_unconfirmed';

/** D134: `error` is a stable code alone (the platform's words are in `error_message`). */
const errorMatches = (codes: readonly string[]) => sql<boolean>`r.error = any(${[...codes]}::text[])`;

/** Failures a retry leaves out: the final ones, and an unconfirmed hand-off unless `error_codes` names it. */
const excludedErrors = (errorCodes: readonly string[] | undefined) =>
  errorCodes?.includes(UNCONFIRMED) ? FINAL_ERRORS : [...FINAL_ERRORS, UNCONFIRMED];

/**
 * The original's recipients a retry takes, in their order: `failed`, not for a final reason, their contact not
 * `unavailable` or deleted, not held by another live retry; with `error_codes`, only those errors.
 */
function retryable(db: Kysely<DB>, orgId: string, broadcastId: string, errorCodes: readonly string[] | undefined) {
  return db
    .selectFrom('broadcast_recipients as r')
    .innerJoin('contacts as c', (join) => join.onRef('c.org_id', '=', 'r.org_id').onRef('c.id', '=', 'r.contact_id'))
    .select(['r.position', 'r.contact_id', 'r.phone', 'r.send_components', 'r.send_values', 'c.opted_out'])
    .where('r.org_id', '=', orgId)
    .where('r.broadcast_id', '=', broadcastId)
    .where('r.status', '=', 'failed')
    .where(sql<boolean>`not coalesce(${errorMatches(excludedErrors(errorCodes))}, false)`)
    .$if(errorCodes !== undefined, (query) => query.where(errorMatches(errorCodes ?? [])))
    .where('c.deleted_at', 'is', null)
    .where('c.messaging_status', '!=', 'unavailable')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('broadcast_recipients as live')
            .select(sql`1`.as('one'))
            .whereRef('live.org_id', '=', 'r.org_id')
            .whereRef('live.retry_of_broadcast_id', '=', 'r.broadcast_id')
            .whereRef('live.retry_of_position', '=', 'r.position')
            .where('live.status', 'not in', ['failed', 'cancelled']),
        ),
      ),
    )
    .orderBy('r.position')
    .execute();
}

/** Queues the retry as a new broadcast; a claimed idempotency key is completed in its transaction. */
async function queueRetry(
  deps: SendableDeps,
  orgId: string,
  broadcastId: string,
  errorCodes: readonly string[] | undefined,
  idempotency?: IdempotencyHold,
): Promise<AdmittedBroadcast> {
  const { db } = deps;
  const original = await db
    .selectFrom('broadcasts')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', broadcastId)
    .executeTakeFirst();
  if (!original) throw notFound();
  // It is a send (decisions §13): the template must still be APPROVED and the original channel still live.
  const { template } = await sendableTemplate(deps, orgId, original.template_id);
  const channelId = await channelFor(db, orgId, template.account_id, original.channel_id);
  try {
    return await admitBroadcast(db, {
      orgId,
      broadcast: {
        id: newId('bc'),
        ...templateColumns(template),
        // The original's name and language (a snapshot taken when it was sent).
        template_name: original.template_name,
        template_language: original.template_language,
        channel_id: channelId,
        origin: 'api',
        retry_of: broadcastId,
      },
      limit: 'refuse',
      idempotency,
      // Read under the account lock: a concurrent retry of the same broadcast has committed its rows by now.
      readUnderLock: true,
      async recipients(trx) {
        const rows = await retryable(trx, orgId, broadcastId, errorCodes);
        if (rows.length === 0) throw new ApiError(409, { code: 'nothing_to_retry', broadcast_id: broadcastId });
        // An audience's recipient has its values, not its components (D219): the retry sends the same components.
        const fill = componentsFiller(original.base_components, (original.contact_tokens ?? []) as ContactToken[]);
        return rows.map((row) => ({
          contactId: row.contact_id,
          phone: row.phone,
          sendComponents: row.send_components ?? fill(row.send_values ?? []),
          optedOut: row.opted_out,
          retryOf: { broadcastId, position: row.position },
        }));
      },
    });
  } catch (error) {
    // decisions §13: the unique index of live retries decides between concurrent retries of one recipient.
    if (isUniqueViolation(error, 'broadcast_recipients_retry_uq')) {
      throw new ApiError(409, { code: 'nothing_to_retry', broadcast_id: broadcastId });
    }
    throw error;
  }
}

export interface RetryDeps extends SendableDeps {
  broadcasts: BroadcastsService;
}

export function createRetryService(deps: RetryDeps) {
  return {
    /** decisions §13: a retry of a broadcast's failures is a send, with the same Idempotency-Key semantics. */
    async retry(
      orgId: string,
      broadcastId: string,
      body: { error_codes?: string[] | undefined },
      idempotencyKey?: string,
    ): Promise<{ broadcast: AdmittedBroadcast; replayed: boolean }> {
      const request = { body: { retry_of: broadcastId, body }, key: idempotencyKey };
      const { result, replayed } = await withIdempotencyKey(
        deps.db,
        orgId,
        request,
        (held) => queueRetry(deps, orgId, broadcastId, body.error_codes, held),
        (id) => deps.broadcasts.get(orgId, id),
      );
      return { broadcast: result, replayed };
    },
  };
}

export type RetryService = ReturnType<typeof createRetryService>;
