// The claim's first half: the due recipients a worker may take, locked (`FOR UPDATE SKIP LOCKED`, so workers never
// wait on each other), in queue order, with what their hand-off needs (their broadcast's template, their number).
import { sql, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { type ContactToken, componentsFiller } from './audience-components.ts';

/** A due recipient as the claim found it, before it is paid for and leased. */
export type Candidate = Awaited<ReturnType<typeof claimBatch>>[number];

/** What a hand-off needs of the recipient's broadcast (an audience's base components and tokens: D219). */
const BROADCAST_COLUMNS = [
  'b.template_id',
  'b.template_name',
  'b.template_language',
  'b.template_category',
  'b.base_components',
  'b.contact_tokens',
] as const;

/**
 * Due recipients of one organization with what their hand-off needs, from live broadcasts; `due` says which rows.
 * D318: every table names the organization (on Citus, its shard, where `FOR UPDATE SKIP LOCKED` runs).
 */
function candidates(trx: Transaction<DB>, orgId: string) {
  return (
    trx
      .selectFrom('broadcast_recipients as r')
      // D204: each row finds its broadcast and its channel by their whole key, in a subquery the planner cannot
      // flatten (`offset 0`). As plain joins, the organization's key joined all three tables in one equivalence
      // class, and with no statistics for a new organization's broadcasts the planner probed them by `org_id` alone:
      // every broadcast of the organization for every row (120,480 rows, 138 ms for a claim of 64 beside 378 sends).
      .innerJoinLateral(
        (eb) =>
          eb
            .selectFrom('broadcasts as b')
            .select(BROADCAST_COLUMNS)
            .where('b.org_id', '=', orgId)
            .whereRef('b.id', '=', 'r.broadcast_id')
            .where('b.stored_status', 'is', null)
            .offset(0)
            .as('b'),
        (join) => join.onTrue(),
      )
      .innerJoinLateral(
        (eb) =>
          eb
            .selectFrom('channels as ch')
            .select(['ch.phone_number_id', 'ch.status'])
            .where('ch.org_id', '=', orgId)
            .whereRef('ch.id', '=', 'r.channel_id')
            // decisions §16: a number the platform told to slow down rests (platform-pacing.ts).
            .where((eb) => eb.or([eb('ch.slowed_until', 'is', null), eb('ch.slowed_until', '<=', sql<Date>`now()`)]))
            .offset(0)
            .as('ch'),
        (join) => join.onTrue(),
      )
      .select([
        'r.org_id',
        'r.broadcast_id',
        'r.position',
        'r.account_id',
        'r.channel_id',
        'r.contact_id',
        'r.phone',
        'r.send_components',
        'r.send_values',
        'r.attempts',
        ...BROADCAST_COLUMNS,
        'ch.phone_number_id',
        'ch.status as channel_status',
        'r.status as previous_status',
        'r.charged as previous_charge',
      ])
  );
}

/**
 * The batch: first the rows whose lease ran out before their hand-off started (nothing was sent, so they can be
 * taken again; rare, found by the leased-rows index), then queued rows in due order. Two statements rather than one
 * `OR`, so that the queued rows are read in the order of their index (`broadcast_recipients_org_claim_idx`, migration
 * 0046) and a claim reads about `limit` entries whatever the backlog: with the `OR`, every due row was read and
 * sorted for each batch (287 ms at 140,000 queued rows).
 */
export async function claimBatch(
  trx: Transaction<DB>,
  orgId: string,
  options: { limit: number; leaseMs: number; token: string },
) {
  // D192: the plan must not depend on the tables' statistics. Right after an audience's chunks or a large send they
  // are stale (a new broadcast's queued rows estimated at one, its paused or cancelled neighbours making the join
  // look empty), and the planner read and sorted every queued row of the broadcast for each claim (84,880 rows,
  // 333 ms, where the index gives 64 in order in a few ms). Sorting and whole-table scans are priced out for these
  // two statements only.
  // (An error aborts the transaction, whose end discards the settings: nothing to restore then.)
  await plannerSettings(trx, 'off');
  const rows = await dueCandidates(trx, orgId, options);
  await plannerSettings(trx, 'on');
  return rows;
}

/** Sorting and sequential scans for the rest of the transaction (`set local`), in one round trip. */
const plannerSettings = (trx: Transaction<DB>, value: 'on' | 'off') =>
  sql`select set_config('enable_sort', ${value}, true), set_config('enable_seqscan', ${value}, true)`.execute(trx);

async function dueCandidates(
  trx: Transaction<DB>,
  orgId: string,
  options: { limit: number; leaseMs: number; token: string },
) {
  const expired = await candidates(trx, orgId)
    .where('r.org_id', '=', orgId)
    .where('r.status', '=', 'sending')
    .where('r.handoff_started_at', 'is', null)
    .where('r.lease_until', '<', sql<Date>`now()`)
    .orderBy('r.lease_until')
    .limit(options.limit)
    .forUpdate('r')
    .skipLocked()
    .execute();
  if (expired.length >= options.limit) return expired;
  const queued = await candidates(trx, orgId)
    .where('r.org_id', '=', orgId)
    .where('r.status', '=', 'queued')
    .where('r.next_attempt_at', '<=', sql<Date>`now()`)
    .orderBy('r.next_attempt_at')
    .orderBy('r.broadcast_id')
    .orderBy('r.position')
    .limit(options.limit - expired.length)
    .forUpdate('r')
    .skipLocked()
    .execute();
  return withComponents([...expired, ...queued]);
}

/**
 * Each row with its send components: its own (a send's), or its broadcast's base with its values put in (an
 * audience's, D219), the base read once per broadcast of the batch.
 */
function withComponents<
  T extends {
    broadcast_id: string;
    send_components: unknown;
    send_values: (string | null)[] | null;
    base_components: unknown;
    contact_tokens: unknown;
  },
>(rows: T[]) {
  const fillers = new Map<string, ReturnType<typeof componentsFiller>>();
  const fillerOf = (row: T) => {
    let filler = fillers.get(row.broadcast_id);
    if (!filler) {
      filler = componentsFiller(row.base_components, (row.contact_tokens ?? []) as ContactToken[]);
      fillers.set(row.broadcast_id, filler);
    }
    return filler;
  };
  return rows.map((row) => {
    const { send_values, base_components: _base, contact_tokens: _tokens, ...rest } = row;
    return { ...rest, send_components: rest.send_components ?? fillerOf(row)(send_values ?? []) };
  });
}
