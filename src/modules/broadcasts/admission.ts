// The admission step: "admit and queue a broadcast", in one transaction. Every way a message enters the queue goes
// through it (a send, a retry of failures, an audience broadcast, a template reply): lock the account's 24-hour
// window (D183: not the account row, which only what charges the balance locks), apply the 24-hour limit
// (decisions §7) or leave the pacing to the worker (§16), check that the balance can pay one message, write the
// broadcast and its recipients (opted-out ones `failed` at once, §14) and complete a claimed idempotency key. A
// refusal writes nothing.

import type { Insertable, Kysely, Transaction } from 'kysely';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { BroadcastsTable, DB } from '../../db/schema.ts';
import { ApiError } from '../../http/errors.ts';
import { broadcastView } from './broadcast-view.ts';
import { insertBroadcast } from './broadcasts.repo.ts';
import { completeIdempotencyKey } from './idempotency.ts';
import { canPay, priceOf } from './recipient-rules.ts';
import { type QueuedRecipient, queueRecipients, recordFailedAtOnce } from './recipients.repo.ts';
import { lockWindow, readAccount, recentPhones } from './sends.repo.ts';

/** A claimed Idempotency-Key, completed in the admission's own transaction (decisions §7). */
export interface IdempotencyHold {
  key: string;
  token: string;
}

/** decisions §14: only MARKETING templates skip opted-out contacts; UTILITY and AUTHENTICATION still reach them. */
export const honoursOptOut = (category: string): boolean => category === 'MARKETING';

export interface RoomCheck {
  orgId: string;
  accountId: string;
  category: string;
  /** The phones that will be handed off (opted-out recipients of a MARKETING template are not among them). */
  phones: readonly string[];
  /**
   * `refuse`: new distinct phones beyond what the rolling 24-hour limit leaves are a 409 (sends, retries, replies
   * outside the window). `pace`: the worker paces hand-offs by the limit instead (audience broadcasts, §16), and the
   * balance is checked even before any phone is known.
   */
  limit: 'refuse' | 'pace';
}

/**
 * Applies the 24-hour limit and the balance, in that order. `refuse` locks the account's window for the rest of the
 * transaction (it serialises admissions of one account, so two that each fit but together do not cannot both
 * pass); the balance is only checked here (the claim reserves it), so the account row is not locked: a caller that
 * charges it locks it first (lockAccount, then this: the one lock order).
 */
export async function checkRoom(trx: Kysely<DB>, check: RoomCheck): Promise<void> {
  await applyLimits(trx, await readAccount(trx, check.orgId, check.accountId), check);
}

type AccountRow = Awaited<ReturnType<typeof readAccount>>;

async function applyLimits(trx: Kysely<DB>, account: AccountRow, check: RoomCheck): Promise<void> {
  if (check.limit === 'refuse') {
    const window = await recentPhones(trx, check.orgId, check.accountId, [...check.phones]);
    const remaining = Math.max(0, account.messaging_limit_24h - window.used);
    if (check.phones.length - window.repeated > remaining) {
      throw new ApiError(409, { code: 'messaging_limit_exceeded', remaining, limit: account.messaging_limit_24h });
    }
  }
  const price = priceOf(account.prices, check.category);
  const charges = check.limit === 'pace' || check.phones.length > 0;
  if (charges && !canPay(Number(account.balance), price)) {
    throw new ApiError(402, { code: 'messaging_insufficient_balance', balance: Number(account.balance), price });
  }
}

/** A recipient to admit; `optedOut` ones of a MARKETING template are `failed` `opted_out` at once, uncharged. */
export type AdmittedRecipient = Omit<QueuedRecipient, 'failure'> & { optedOut: boolean };

export interface Admission {
  orgId: string;
  /** The broadcast row, without what the admission fills in (`org_id`, `requested`, `idempotency_key`). */
  broadcast: Omit<Insertable<BroadcastsTable>, 'org_id' | 'requested' | 'idempotency_key'>;
  /**
   * The recipients, read in the admission's transaction: before the account lock by default (work that does not
   * need it, such as creating contacts, keeps the lock short), under it with `readUnderLock` (rows that concurrent
   * admissions of the account may be writing, such as a retry's).
   */
  recipients(trx: Transaction<DB>): Promise<AdmittedRecipient[]>;
  readUnderLock?: boolean;
  limit: RoomCheck['limit'];
  idempotency?: IdempotencyHold | undefined;
}

export type AdmittedBroadcast = ReturnType<typeof broadcastView>;

/** Admits and queues a broadcast; answers it as it stands at the commit (nothing is handed off before it). */
export function admitBroadcast(db: Kysely<DB>, admission: Admission): Promise<AdmittedBroadcast> {
  const { orgId, broadcast } = admission;
  const skipsOptedOut = honoursOptOut(broadcast.template_category);
  return transactionWithRetry(db, async (trx) => {
    const early = admission.readUnderLock ? undefined : await admission.recipients(trx);
    // `refuse` takes the window's lock in applyLimits (recentPhones); recipients read under the lock need it first.
    // An audience broadcast (`pace`) takes no room at its admission: it locks nothing, and its 202 never waits for
    // the account's sends or chunks.
    if (admission.readUnderLock) await lockWindow(trx, orgId, broadcast.account_id);
    const account = await readAccount(trx, orgId, broadcast.account_id);
    const recipients = early ?? (await admission.recipients(trx));
    await applyLimits(trx, account, {
      orgId,
      accountId: broadcast.account_id,
      category: broadcast.template_category,
      phones: recipients.filter((recipient) => !(skipsOptedOut && recipient.optedOut)).map((r) => r.phone),
      limit: admission.limit,
    });
    const inserted = await insertBroadcast(trx, {
      ...broadcast,
      org_id: orgId,
      requested: recipients.length,
      idempotency_key: admission.idempotency?.key ?? null,
    });
    const failed =
      recipients.length === 0
        ? []
        : await queueRecipients(
            trx,
            orgId,
            { id: broadcast.id, accountId: broadcast.account_id, channelId: broadcast.channel_id },
            recipients.map(({ optedOut, ...recipient }) => ({
              ...recipient,
              failure: skipsOptedOut && optedOut ? 'opted_out' : undefined,
            })),
          );
    await recordFailedAtOnce(trx, failed);
    if (admission.idempotency) await completeIdempotencyKey(trx, orgId, admission.idempotency, broadcast.id);
    return broadcastView({ ...inserted, sent: 0, failed: failed.length });
  });
}
