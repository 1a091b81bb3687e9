// The admission of outbound messages, one step for all of them: a send, a retry of failures and an audience
// broadcast (through broadcasts/admission.ts), a reply of any type (§15), and the rules' and the assistant's
// `system`/`ai` answers (§20). It applies the rolling 24-hour limit (decisions §7) or leaves the pacing to the
// worker (§16), checks that the balance pays, and charges what is paid at once. A refusal is an ApiError and, in the
// caller's transaction, writes nothing.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { ApiError } from '../../http/errors.ts';
import { adjustBalance, lockAccount, readAccount } from './accounts.repo.ts';
import { canPay, priceOf } from './prices.ts';
import { recentPhones, takePlace } from './window.repo.ts';

/** decisions §14: only MARKETING templates skip opted-out contacts; UTILITY and AUTHENTICATION still reach them. */
export const honoursOptOut = (category: string): boolean => category === 'MARKETING';

export interface MessageAdmission {
  orgId: string;
  accountId: string;
  /**
   * The template's category; null for a free-form message (text and media replies, `system` and `ai` answers):
   * free and outside the 24-hour limit (decisions §15), sent only inside the conversation's window, which the
   * caller checks against its conversation.
   */
  category: string | null;
  /** The phones that will be handed off (opted-out recipients of a MARKETING template are not among them). */
  phones: readonly string[];
  /**
   * `refuse`: new distinct phones beyond what the rolling 24-hour limit leaves are a 409 (sends, retries, replies
   * outside the window); it locks the account's window for the rest of the transaction, so two admissions that each
   * fit but together do not cannot both pass. `pace`: no limit here (audience broadcasts, whose worker paces the
   * hand-offs, §16; template replies inside the window), and the balance is checked even before any phone is known.
   */
  limit: 'refuse' | 'pace';
  /**
   * `at-claim`: the fan-out's claim reserves each message's price (broadcasts), so the balance is only checked and
   * the account row is not locked. `now`: charged in this transaction (a template reply), the account row locked
   * first (D183's lock order: the account, then the window); under `refuse` the phones take their place in the
   * window at once.
   */
  payment: 'at-claim' | 'now';
}

export interface AdmittedMessage {
  /** What the balance paid now (a refusal of the platform gives it back). */
  charged: number;
  /** The account whose 24-hour window counts the message (the messages' `window_account_id`), or null. */
  windowAccountId: string | null;
}

type AccountRow = Awaited<ReturnType<typeof readAccount>>;

async function applyLimits(trx: Kysely<DB>, account: AccountRow, admission: MessageAdmission, category: string) {
  const { orgId, accountId, phones } = admission;
  if (admission.limit === 'refuse') {
    const window = await recentPhones(trx, orgId, accountId, [...phones]);
    const remaining = Math.max(0, account.messaging_limit_24h - window.used);
    if (phones.length - window.repeated > remaining) {
      throw new ApiError(409, { code: 'messaging_limit_exceeded', remaining, limit: account.messaging_limit_24h });
    }
  }
  const price = priceOf(account.prices, category);
  const charges = admission.limit === 'pace' || phones.length > 0;
  if (charges && !canPay(Number(account.balance), price)) {
    throw new ApiError(402, { code: 'messaging_insufficient_balance', balance: Number(account.balance), price });
  }
  return price;
}

/** Admits messages of one account in the caller's transaction, in the order above; answers what it charged. */
export async function admitMessage(trx: Kysely<DB>, admission: MessageAdmission): Promise<AdmittedMessage> {
  const { orgId, accountId, category } = admission;
  if (category === null) return { charged: 0, windowAccountId: null };
  if (admission.payment === 'at-claim') {
    await applyLimits(trx, await readAccount(trx, orgId, accountId), admission, category);
    return { charged: 0, windowAccountId: null };
  }
  const account = await lockAccount(trx, orgId, accountId);
  const price = await applyLimits(trx, account, admission, category);
  const charged = price * admission.phones.length;
  await adjustBalance(trx, orgId, accountId, -charged);
  if (admission.limit === 'pace') return { charged, windowAccountId: null };
  for (const phone of admission.phones) await takePlace(trx, orgId, accountId, phone);
  return { charged, windowAccountId: accountId };
}
