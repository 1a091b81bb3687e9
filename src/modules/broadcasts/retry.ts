// POST /v1/broadcasts/{id}/retry (decisions §13): a new broadcast of the original's failed recipients whose failure
// can succeed on another try, with their stored send components, under every rule and refusal of a send.
import { type Kysely, sql } from 'kysely';
import { isUniqueViolation } from '../../db/errors.ts';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound } from '../../http/errors.ts';
import { newId } from '../../lib/ids.ts';
import { insertBroadcast } from './broadcasts.repo.ts';
import { priceOf } from './recipient-rules.ts';
import { queueRecipients, recordFailedAtOnce } from './recipients.repo.ts';
import { lockAccount, recentPhones } from './sends.repo.ts';

/** decisions §13: failures another try cannot fix. `not_on_network` errors carry the platform's message after it. */
const FINAL_ERRORS = ['opted_out', 'not_on_network'];

const errorMatches = (codes: readonly string[]) =>
  sql<boolean>`(${sql.join(
    codes.map((code) => sql`r.error = ${code} or r.error like ${`${escapeLike(code)}:%`}`),
    sql` or `,
  )})`;

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (match) => `\\${match}`);

/**
 * The original's recipients a retry takes, in their order: `failed`, not for a final reason, their contact not
 * `unavailable` or deleted, not held by another live retry; with `error_codes`, only those errors.
 */
function retryable(db: Kysely<DB>, orgId: string, broadcastId: string, errorCodes: readonly string[] | undefined) {
  return db
    .selectFrom('broadcast_recipients as r')
    .innerJoin('contacts as c', (join) => join.onRef('c.org_id', '=', 'r.org_id').onRef('c.id', '=', 'r.contact_id'))
    .select(['r.position', 'r.contact_id', 'r.phone', 'r.send_components', 'c.opted_out'])
    .where('r.org_id', '=', orgId)
    .where('r.broadcast_id', '=', broadcastId)
    .where('r.status', '=', 'failed')
    .where(sql<boolean>`not coalesce(${errorMatches(FINAL_ERRORS)}, false)`)
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

export interface RetryDeps {
  db: Kysely<DB>;
  sendableTemplate(orgId: string, templateId: string): Promise<{ template: { category: string; account_id: string } }>;
  channelFor(orgId: string, accountId: string, channelId: string | undefined): Promise<string>;
}

/** Queues the retry; answers the new broadcast's id. A claimed idempotency key is completed by `complete`. */
export async function queueRetry(
  deps: RetryDeps,
  orgId: string,
  broadcastId: string,
  errorCodes: readonly string[] | undefined,
  complete?: (trx: Kysely<DB>, broadcastId: string) => Promise<void>,
): Promise<string> {
  const { db } = deps;
  const original = await db
    .selectFrom('broadcasts')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', broadcastId)
    .executeTakeFirst();
  if (!original) throw notFound();
  // It is a send (decisions §13): the template must still be APPROVED and the original channel still live.
  const { template } = await deps.sendableTemplate(orgId, original.template_id);
  const channelId = await deps.channelFor(orgId, template.account_id, original.channel_id);
  const honoursOptOut = template.category === 'MARKETING';
  const retryId = newId('bc');
  try {
    await db.transaction().execute(async (trx) => {
      const account = await lockAccount(trx, orgId, template.account_id);
      // Read after the account lock: a concurrent retry of the same broadcast has committed its rows by now.
      const rows = await retryable(trx, orgId, broadcastId, errorCodes);
      if (rows.length === 0) throw new ApiError(409, { code: 'nothing_to_retry', broadcast_id: broadcastId });
      const reached = rows.filter((row) => !(honoursOptOut && row.opted_out));
      const phones = reached.map((row) => row.phone);
      const window = await recentPhones(trx, orgId, template.account_id, phones);
      const remaining = Math.max(0, account.messaging_limit_24h - window.used);
      if (phones.length - window.repeated > remaining) {
        throw new ApiError(409, { code: 'messaging_limit_exceeded', remaining, limit: account.messaging_limit_24h });
      }
      const price = priceOf(account.prices, template.category);
      if (phones.length > 0 && Number(account.balance) + 1e-9 < price) {
        throw new ApiError(402, { code: 'messaging_insufficient_balance', balance: Number(account.balance), price });
      }
      await insertBroadcast(trx, {
        org_id: orgId,
        id: retryId,
        template_id: original.template_id,
        template_name: original.template_name,
        template_language: original.template_language,
        template_category: template.category,
        account_id: template.account_id,
        channel_id: channelId,
        requested: rows.length,
        origin: 'api',
        idempotency_key: null,
        retry_of: broadcastId,
      });
      const failed = await queueRecipients(
        trx,
        orgId,
        { id: retryId, accountId: template.account_id, channelId },
        rows.map((row) => ({
          contactId: row.contact_id,
          phone: row.phone,
          sendComponents: row.send_components,
          failure: honoursOptOut && row.opted_out ? 'opted_out' : undefined,
          retryOf: { broadcastId, position: row.position },
        })),
      );
      await recordFailedAtOnce(trx, failed);
      await complete?.(trx, retryId);
    });
  } catch (error) {
    // decisions §13: the unique index of live retries decides between concurrent retries of one recipient.
    if (isUniqueViolation(error, 'broadcast_recipients_retry_uq')) {
      throw new ApiError(409, { code: 'nothing_to_retry', broadcast_id: broadcastId });
    }
    throw error;
  }
  return retryId;
}
