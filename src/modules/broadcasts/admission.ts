// A broadcast's admission, in one transaction: a send, a retry of failures and an audience broadcast enter the queue
// here. The messages' own admission (the 24-hour limit, the balance: messaging-accounts/admission.ts) takes the
// account's window lock when it refuses beyond the limit (D183: not the account row, which only what charges the
// balance locks); then the broadcast and its recipients are written (opted-out ones `failed` at once, §14) and a
// claimed idempotency key is completed. A refusal writes nothing.

import type { Insertable, Kysely, Transaction } from 'kysely';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { BroadcastsTable, DB } from '../../db/schema.ts';
import { completeIdempotencyKey, type IdempotencyHold } from '../../http/idempotency.ts';
import { admitMessage, honoursOptOut, type MessageAdmission } from '../messaging-accounts/admission.ts';
import { lockWindow } from '../messaging-accounts/window.repo.ts';
import { broadcastView } from '../recipients/broadcast-view.ts';
import { type QueuedRecipient, queueRecipients, recordFailedAtOnce } from '../recipients/recipient-queue.ts';
import { broadcastMoves, insertBroadcast } from './broadcasts.repo.ts';

/** A recipient to admit; `optedOut` ones of a MARKETING template are `failed` `opted_out` at once, uncharged. */
export type AdmittedRecipient = Omit<QueuedRecipient, 'failure'> & { optedOut: boolean };

export interface Admission {
  orgId: string;
  /** The broadcast row, without what the admission fills in (`org_id`, `requested`, `idempotency_key`). */
  broadcast: Omit<Insertable<BroadcastsTable>, 'org_id' | 'requested' | 'idempotency_key'>;
  /**
   * The recipients, read in the admission's transaction: before the window's lock by default (work that does not
   * need it, such as creating contacts, keeps the lock short), under it with `readUnderLock` (rows that concurrent
   * admissions of the account may be writing, such as a retry's).
   */
  recipients(trx: Transaction<DB>): Promise<AdmittedRecipient[]>;
  readUnderLock?: boolean;
  limit: MessageAdmission['limit'];
  idempotency?: IdempotencyHold | undefined;
}

export type AdmittedBroadcast = ReturnType<typeof broadcastView>;

/** Admits and queues a broadcast; answers it as it stands at the commit (nothing is handed off before it). */
export function admitBroadcast(db: Kysely<DB>, admission: Admission): Promise<AdmittedBroadcast> {
  const { orgId, broadcast } = admission;
  const skipsOptedOut = honoursOptOut(broadcast.template_category);
  return transactionWithRetry(db, async (trx) => {
    const early = admission.readUnderLock ? undefined : await admission.recipients(trx);
    // `refuse` takes the window's lock in admitMessage; recipients read under the lock need it first. An audience
    // broadcast (`pace`) takes no room at its admission: it locks nothing, and its 202 never waits for the account's
    // sends or chunks.
    if (admission.readUnderLock) await lockWindow(trx, orgId, broadcast.account_id);
    const recipients = early ?? (await admission.recipients(trx));
    await admitMessage(trx, {
      orgId,
      accountId: broadcast.account_id,
      category: broadcast.template_category,
      phones: recipients.filter((recipient) => !(skipsOptedOut && recipient.optedOut)).map((r) => r.phone),
      limit: admission.limit,
      payment: 'at-claim',
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
    await recordFailedAtOnce(trx, failed, broadcastMoves);
    if (admission.idempotency) await completeIdempotencyKey(trx, orgId, admission.idempotency, broadcast.id);
    return broadcastView({ ...inserted, sent: 0, failed: failed.length });
  });
}
