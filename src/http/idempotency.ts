// Idempotency keys with Stripe's semantics (decisions §7, §15), for the requests that queue messages (sends,
// retries, audience broadcasts, replies): per organization, 24 hours; the same key and body return the original
// answer (the broadcast or message the key names), a different body is 422 `idempotency_key_reused`, and a key
// whose first request is still being queued is 409 `idempotency_key_in_flight`. The key is claimed in its own
// committed transaction, so concurrent requests meet on the primary key; a refused request releases its key for a
// corrected retry. The in-flight lock is a lease of a few seconds renewed while the request runs, so a request that
// died frees its key within seconds.
import { createHash, randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema.ts';
import { ApiError } from './errors.ts';

export const IDEMPOTENCY_WINDOW_HOURS = 24;
// The in-flight lock is a short lease that the claiming process renews while its request runs: a request that died
// (a crashed or killed process) frees its key within seconds, not minutes (decisions D52).
export const IN_FLIGHT_LEASE_SECONDS = 5;
const RENEW_EVERY_MS = 1500;
// A request never holds a key longer than this, however long it runs.
const MAX_HOLD_MS = 5 * 60_000;

/** A claimed Idempotency-Key, completed in the transaction of the work it guards (decisions §7). */
export interface IdempotencyHold {
  key: string;
  token: string;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function requestHash(request: unknown): string {
  return createHash('sha256').update(canonical(request)).digest('hex');
}

export type IdempotencyClaim = { kind: 'new'; token: string } | { kind: 'replay'; broadcastId: string };

export async function claimIdempotencyKey(
  db: Kysely<DB>,
  orgId: string,
  key: string,
  hash: string,
): Promise<IdempotencyClaim> {
  const claim = await claimKey(db, orgId, key, hash);
  if (claim.kind === 'new') renewWhileHeld(db, orgId, key, claim.token);
  return claim;
}

/**
 * Renews the lease while the claim is held. It stops by itself once the key is completed (it names a broadcast),
 * released (deleted) or taken over (another token): the renewal then finds no row. Failures are only skipped: a
 * lease that cannot be renewed runs out, which is the safe side.
 */
function renewWhileHeld(db: Kysely<DB>, orgId: string, key: string, token: string): void {
  const started = Date.now();
  const timer = setInterval(() => {
    if (Date.now() - started > MAX_HOLD_MS) return clearInterval(timer);
    db.updateTable('idempotency_keys')
      .set({ locked_until: sql<Date>`now() + make_interval(secs => ${IN_FLIGHT_LEASE_SECONDS})` })
      .where('org_id', '=', orgId)
      .where('key', '=', key)
      .where('claim_token', '=', token)
      .where('broadcast_id', 'is', null)
      .executeTakeFirst()
      .then(
        (result) => {
          if (Number(result.numUpdatedRows) === 0) clearInterval(timer);
        },
        () => {},
      );
  }, RENEW_EVERY_MS);
  // A renewal never keeps the process alive.
  timer.unref();
}

async function claimKey(db: Kysely<DB>, orgId: string, key: string, hash: string): Promise<IdempotencyClaim> {
  const token = randomUUID();
  return db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto('idempotency_keys')
      .values({
        org_id: orgId,
        key,
        request_hash: hash,
        claim_token: token,
        locked_until: sql<Date>`now() + make_interval(secs => ${IN_FLIGHT_LEASE_SECONDS})`,
      })
      .onConflict((conflict) => conflict.columns(['org_id', 'key']).doNothing())
      .returning('key')
      .executeTakeFirst();
    if (inserted) return { kind: 'new', token } as const;
    const row = await trx
      .selectFrom('idempotency_keys')
      .select([
        'request_hash',
        'broadcast_id',
        sql<boolean>`created_at < now() - make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS})`.as('expired'),
        sql<boolean>`locked_until is not null and locked_until > now()`.as('locked'),
      ])
      .where('org_id', '=', orgId)
      .where('key', '=', key)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const takeOver = async () => {
      await trx
        .updateTable('idempotency_keys')
        .set({
          request_hash: hash,
          broadcast_id: null,
          claim_token: token,
          created_at: sql`now()`,
          locked_until: sql<Date>`now() + make_interval(secs => ${IN_FLIGHT_LEASE_SECONDS})`,
        })
        .where('org_id', '=', orgId)
        .where('key', '=', key)
        .execute();
      return { kind: 'new', token } as const;
    };
    // Past the window the key is forgotten and can be used afresh.
    if (row.expired) return takeOver();
    if (row.request_hash !== hash) throw new ApiError(422, { code: 'idempotency_key_reused' });
    if (row.broadcast_id) return { kind: 'replay', broadcastId: row.broadcast_id };
    if (row.locked) throw new ApiError(409, { code: 'idempotency_key_in_flight' });
    // The first request died without finishing (its lock ran out): this one takes over.
    return takeOver();
  });
}

/** A refused request queued nothing: its key is released so that a corrected retry may use it. */
export async function releaseIdempotencyKey(db: Kysely<DB>, orgId: string, claim: IdempotencyHold): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('org_id', '=', orgId)
    .where('key', '=', claim.key)
    .where('claim_token', '=', claim.token)
    .where('broadcast_id', 'is', null)
    .execute();
}

/**
 * Records the broadcast under the key, in the send's own transaction. When another request has taken the key over
 * meanwhile (this one outlived its lock), this one must not queue anything: it answers in-flight and rolls back.
 */
export async function completeIdempotencyKey(
  trx: Kysely<DB>,
  orgId: string,
  claim: IdempotencyHold,
  broadcastId: string,
) {
  const completed = await trx
    .updateTable('idempotency_keys')
    .set({ broadcast_id: broadcastId, locked_until: null })
    .where('org_id', '=', orgId)
    .where('key', '=', claim.key)
    .where('claim_token', '=', claim.token)
    .where('broadcast_id', 'is', null)
    .executeTakeFirst();
  if (Number(completed.numUpdatedRows) !== 1) throw new ApiError(409, { code: 'idempotency_key_in_flight' });
}

/** One batch of retention: at most `batch` keys past their 24 hours (decisions §7); answers how many went. */
export async function purgeExpiredIdempotencyKeys(db: Kysely<DB>, batch: number): Promise<number> {
  const deleted = await sql`
    delete from idempotency_keys k
    using (
      select org_id, key from idempotency_keys
      where created_at < now() - make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS}) limit ${batch}
    ) old
    where k.org_id = old.org_id and k.key = old.key
  `.execute(db);
  return Number(deleted.numAffectedRows ?? 0);
}

/**
 * decisions §7, Stripe's semantics: without a key, run the work. With an `Idempotency-Key`, the key is claimed first
 * in its own transaction: a replay answers what the key names (`replay`); a refusal (or a fault before the commit)
 * queued nothing, so the key is released for a corrected request. A key that names a broadcast is never released.
 * The work completes the key in its own transaction (the admission step does).
 */
export async function withIdempotencyKey<T>(
  db: Kysely<DB>,
  orgId: string,
  request: { body: unknown; key: string | undefined },
  work: (held?: IdempotencyHold) => Promise<T>,
  replay: (broadcastId: string) => Promise<T>,
): Promise<{ result: T; replayed: boolean }> {
  if (request.key === undefined) return { result: await work(), replayed: false };
  const claim = await claimIdempotencyKey(db, orgId, request.key, requestHash(request.body));
  if (claim.kind === 'replay') return { result: await replay(claim.broadcastId), replayed: true };
  const held: IdempotencyHold = { key: request.key, token: claim.token };
  try {
    return { result: await work(held), replayed: false };
  } catch (error) {
    await releaseIdempotencyKey(db, orgId, held);
    throw error;
  }
}
