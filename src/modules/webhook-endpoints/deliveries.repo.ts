// SQL of webhook deliveries (decisions §11): the queue's claim and record, the endpoint's disabling, the deliveries
// log, manual retry and pruning (the subscription rule that queues them is the outbox's: events/subscription-rule.ts).
// Every query filters by the organization first, except the search for organizations with due deliveries, the queue
// depth and pruning, which serve every organization at once.
import { CompiledQuery, type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import { executePrepared } from '../../db/prepared-statements.ts';
import type { DB, DeliveryAttempt, WebhookDeliveriesTable } from '../../db/schema.ts';
import { OTHER_LANE } from '../events/subscription-rule.ts';

export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

/**
 * A lease token starts with its worker's id (a UUID) and goes on with the claim's number (D364): the claim tells the
 * leases of its own worker from another's by this prefix.
 */
export const WORKER_ID_LENGTH = 36;

/** Every lane a delivery can be in (events/subscription-rule.ts: DELIVERY_LANES and the other lane after them). */
const LANES = Array.from({ length: OTHER_LANE + 1 }, (_, lane) => lane);

// ---- The queue ---------------------------------------------------------------------------------------------------

export interface ClaimedDelivery {
  org_id: string;
  id: string;
  endpoint_id: string;
  event_id: string;
  /** 0: conversational; any other: one of the other types' lanes (DELIVERY_LANES, events/subscription-rule.ts). */
  lane: number;
  attempts: number;
  attempt_limit: number | null;
  url: string;
  /** As stored: encrypted under `secrets_key_id` (lib/secrets-box.ts), or in clear when that is null. */
  secret: string;
  previous_secret: string | null;
  secrets_key_id: string | null;
  payload: string;
  lease_token: string;
  /** The endpoint had failed attempts since its last success when claimed. */
  endpoint_failing: boolean;
}

/**
 * The organizations with due deliveries (D342): a read without locks, every shard on Citus, one probe of the
 * per-endpoint index per organization. Not grouped from the due rows, oldest first, as other claims do (D318): that
 * read every due delivery, 22 ms a search beside a backlog of 10,000; the claim takes them in turn instead.
 */
export async function findDueOrgs(db: Kysely<DB>): Promise<string[]> {
  const result = await executePrepared(
    db,
    // offset 0: a probe per organization; as a semi join PostgreSQL hashed every due delivery (18 ms beside 10,000).
    sql<{ org_id: string }>`select o.id as org_id from organizations o
    where exists (select from webhook_deliveries d
      where d.org_id = o.id and d.status = 'pending' and d.next_attempt_at <= now() offset 0)`,
  );
  return result.rows.map((row) => row.org_id);
}

/**
 * Within the organization `orgId` (D342: every table and subquery names it, so that on Citus the statement runs on
 * its shard), records the attempts of `recorded` (as recordAttempts) and claims up to `limit` due deliveries under
 * `token` for `leaseMs`, in one statement (D298): at most `perEndpoint` leased per endpoint and lane (counting
 * those leased, but not the ones this statement records), none of an endpoint's lane another worker holds leases of
 * (D364: `token` starts with the worker's id, WORKER_ID_LENGTH), conversational rows first, then the lanes in turn (each
 * lane's first row, then each one's second, …) of the longest-waiting endpoints, skipping rows and endpoints another
 * claim holds; at most `bulkLimit` rows of the other lanes (D229). Answers the rows claimed and the ids recorded.
 */
export async function recordAndClaim(
  db: Kysely<DB>,
  input: {
    orgId: string;
    token: string;
    limit: number;
    bulkLimit: number;
    perEndpoint: number;
    leaseMs: number;
    recorded?: readonly Recorded[];
  },
): Promise<{ claimed: ClaimedDelivery[]; recorded: Set<string> }> {
  const { orgId, token, limit, bulkLimit, perEndpoint, leaseMs } = input;
  // D207: by name. Polled every 200 ms by each worker, mostly finding nothing: planning it took 2.4 ms a poll, its
  // execution 0.04 ms. D356: its text built once (claimText), only the parameters each time.
  const result = await executePrepared(
    db,
    claimText(db, {
      values: recordedJson(input.recorded ?? []),
      orgId,
      ready: Math.max(limit * 4, 64),
      perEndpoint,
      bulkLimit,
      limit,
      token,
      worker: token.slice(0, WORKER_ID_LENGTH),
      leaseS: leaseMs / 1000,
    }),
  );

  const rows = result.rows;
  const recorded = new Set(rows.find((row) => row.recorded_ids !== null)?.recorded_ids ?? []);
  const claimed: ClaimedDelivery[] = [];
  for (const { recorded_ids: _, ...row } of rows) if (row.id !== null) claimed.push(row);
  return { claimed, recorded };
}

/** The parameters of the claim's statement, by name (D356). */
interface ClaimParameters {
  values: string;
  orgId: string;
  ready: number;
  perEndpoint: number;
  bulkLimit: number;
  limit: number;
  token: string;
  worker: string;
  leaseS: number;
}

/**
 * The claim's SQL text and which parameter goes where, compiled once per database handle (D356), through the
 * handle's own executor and plugins.
 */
const claimCompiled = new WeakMap<Kysely<DB>, { sql: string; order: (keyof ClaimParameters)[] }>();

/**
 * The claim's statement for `p`: its text is fixed (every value is a parameter), so it is compiled once, with each
 * parameter marked by its name, and then only the parameters are put in order. Kysely built and compiled its raw
 * SQL again on every call (≈ 3 % of a delivering worker's CPU, D356).
 */
function claimText(db: Kysely<DB>, p: ClaimParameters): CompiledQuery<ClaimRow> {
  let text = claimCompiled.get(db);
  if (!text) {
    const names = Object.keys(p) as (keyof ClaimParameters)[];
    const marks = Object.fromEntries(names.map((name) => [name, `\u0000${name}`])) as unknown as ClaimParameters;
    const compiled = claimStatement(marks).compile(db);
    const order = compiled.parameters.map((mark) => {
      const name = typeof mark === 'string' ? (mark.slice(1) as keyof ClaimParameters) : undefined;
      if (!name || !names.includes(name) || mark !== `\u0000${name}`) throw new Error('claim: a parameter not marked');
      return name;
    });
    text = { sql: compiled.sql, order };
    claimCompiled.set(db, text);
  }
  return CompiledQuery.raw(
    text.sql,
    text.order.map((name) => p[name]),
  ) as CompiledQuery<ClaimRow>;
}

type ClaimRow = ClaimedDelivery & { recorded_ids: string[] | null };

function claimStatement(p: ClaimParameters) {
  return sql<ClaimRow>`
    with recorded_input as (${recordedRows(p.values)}),
    recorded as (${recordUpdate(p.orgId, sql`recorded_input`)}),
    due_lanes as (
      -- Each lane of the organization's enabled endpoints with its oldest due row, from the per-endpoint index: a
      -- probe per endpoint and lane, whatever the backlog. (Not a recursive skip through the index: Citus takes a
      -- recursive CTE in a statement that writes by no means, D342.)
      select e.id as endpoint_id, l.lane, oldest.at
      from webhook_endpoints e
      cross join (values ${sql.join(LANES.map((lane) => sql`(${sql.lit(lane)})`))}) as l(lane)
      cross join lateral (
        select d.next_attempt_at as at from webhook_deliveries d
        where d.org_id = ${p.orgId} and d.endpoint_id = e.id and d.status = 'pending' and d.lane = l.lane
          and d.next_attempt_at <= now()
        order by d.next_attempt_at limit 1
      ) oldest
      where e.org_id = ${p.orgId} and e.enabled
    ),
    ready as (
      -- The endpoints with something due, the longest-waiting first.
      select endpoint_id, min(at) as due from due_lanes
      group by endpoint_id
      order by due
      limit ${p.ready}
    ),
    candidates as (
      -- turn: the row's place in its endpoint's lane; bulk_rank orders the other lanes' rows turn by turn.
      select d.id, l.lane, r.due, d.turn,
        row_number() over (partition by l.lane = 0 order by d.turn, r.due, l.lane) as rank
      from ready r
      cross join lateral (
        select e.id from webhook_endpoints e
        where e.org_id = ${p.orgId} and e.id = r.endpoint_id and e.enabled
        for no key update skip locked
      ) e
      join due_lanes l on l.endpoint_id = r.endpoint_id
      cross join lateral (
        select d.id, row_number() over (order by d.next_attempt_at) as turn
        from (
          select d.id, d.next_attempt_at from webhook_deliveries d
          where d.org_id = ${p.orgId} and d.endpoint_id = r.endpoint_id and d.lane = l.lane
            and d.status = 'pending' and d.next_attempt_at <= now()
            -- A row recorded here whose lease had run out is not also claimed by the same statement.
            and not exists (select from recorded_input i where i.id = d.id)
          order by d.next_attempt_at
          -- D364: an endpoint's lane leased by another worker is left to it; its own leases count to perEndpoint.
          limit (
            select case when count(*) filter (where left(f.lease_token, ${sql.lit(WORKER_ID_LENGTH)}) <> ${p.worker})
              > 0 then 0 else greatest(0, ${p.perEndpoint} - count(*)) end
            from webhook_deliveries f
            where f.org_id = ${p.orgId} and f.endpoint_id = r.endpoint_id and f.lane = l.lane and f.status = 'pending'
              and f.lease_token is not null and f.next_attempt_at > now()
              and not exists (select from recorded_input i where i.id = f.id))
          for update skip locked
        ) d
      ) d
    ),
    picked as (
      -- now(): the RETURNING below compares with it as a column (Citus takes no stable function there).
      select id, now() as now from candidates
      where lane = 0 or rank <= ${p.bulkLimit}
      order by lane <> 0, turn, due, lane
      limit ${p.limit}
    ),
    claimed as (
      update webhook_deliveries w
      set lease_token = ${p.token}, next_attempt_at = now() + make_interval(secs => ${p.leaseS}),
        updated_at = now()
      from picked p, webhook_endpoints e, webhook_events ev
      where w.org_id = ${p.orgId} and w.id = p.id
        and e.org_id = ${p.orgId} and e.id = w.endpoint_id
        and ev.org_id = ${p.orgId} and ev.id = w.event_id
      returning w.org_id, w.id, w.endpoint_id, w.event_id, w.lane, w.attempts, w.attempt_limit, w.lease_token, e.url,
        e.secret, case when e.previous_secret_expires_at > p.now then e.previous_secret end as previous_secret,
        e.secrets_key_id, ev.payload, e.failing_since is not null as endpoint_failing
    )
    -- One row at least; the first carries the ids recorded (D365: on every claimed row, the ids' parse was 8 % of a
    -- delivering worker's CPU, each group's ids once a row claimed).
    select c.*, case when row_number() over () = 1 then r.ids end as recorded_ids
    from (select array_agg(id) as ids from recorded) r left join claimed c on true
  `;
}

/** Attempts the deliveries log keeps per delivery, the newest. */
export const ATTEMPT_LOG_SIZE = 25;

export interface AttemptRecord {
  /** The attempt as the deliveries log shows it. */
  attempt: DeliveryAttempt;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  statusCode: number | null;
  error: string | null;
  /** For `pending`: when the next attempt is due. */
  retryInMs: number;
}

/** An attempt to record: its claimed row and what became of it. */
export interface Recorded {
  row: ClaimedDelivery;
  record: AttemptRecord;
}

/**
 * Records a group of attempts of the organization `orgId`, each under its claim's lease, in one statement (D297);
 * answers the ids recorded. A row whose lease was lost (another worker took it over) is left as it is and not
 * answered.
 */
export async function recordAttempts(db: Kysely<DB>, orgId: string, group: readonly Recorded[]): Promise<Set<string>> {
  if (group.length === 0) return new Set();
  const values = recordedJson(group);
  const result = await executePrepared(
    db,
    sql<{ id: string }>`with recorded_input as (${recordedRows(values)}) ${recordUpdate(orgId, sql`recorded_input`)}`,
  );
  return new Set(result.rows.map((row) => row.id));
}

/**
 * A group of attempts of one organization as rows: one JSON document (one encode, one parameter) that joins back by
 * the whole key. The generic plan of `org_id = $1 and id = v.id` read every delivery of the organization (D197's
 * trap; 17.7 ms for 8 rows beside a backlog of 20,000), the whole key's probes the primary key (0.3 ms); the
 * organization is named as well (D342), for Citus's routing.
 */
function recordedJson(group: readonly Recorded[]): string {
  return JSON.stringify(
    group.map(({ row, record }) => ({
      org_id: row.org_id,
      id: row.id,
      lease_token: row.lease_token,
      status: record.status,
      attempts: record.attempts,
      status_code: record.statusCode,
      error: record.error,
      // As the one-entry array appended to the log: jsonb_build_array in the SET is refused by Citus as above.
      attempt: [record.attempt],
      retry_s: record.retryInMs / 1000,
    })),
  );
}

/** recordedJson's document as rows. */
function recordedRows(values: string) {
  // The retry's time is reckoned here, not in the update's SET: Citus refuses a stable function of a column there
  // (a timestamp plus an interval; jsonb_build_array).
  return sql`select v.*, now() + make_interval(secs => v.retry_s) as retry_at
    from jsonb_to_recordset(${values}::jsonb) as v(org_id text, id text, lease_token text,
    status text, attempts int, status_code int, error text, attempt jsonb, retry_s float8)`;
}

/** The update recording the attempts of `input` (recordedRows' rows of `orgId`) under their leases, returning the ids. */
function recordUpdate(orgId: string, input: RawBuilder<unknown>) {
  return sql`update webhook_deliveries as w
    set status = v.status, attempts = v.attempts, last_status_code = v.status_code, last_error = v.error,
      -- One more entry, the oldest dropped beyond ATTEMPT_LOG_SIZE.
      attempt_log = case when jsonb_array_length(w.attempt_log) >= ${sql.lit(ATTEMPT_LOG_SIZE)} then w.attempt_log - 0
        else w.attempt_log end || v.attempt,
      lease_token = null,
      next_attempt_at = case when v.status = 'pending' then v.retry_at
        else w.next_attempt_at end,
      updated_at = now()
    from ${input} as v
    where w.org_id = ${orgId} and w.org_id = v.org_id and w.id = v.id and w.lease_token = v.lease_token
    returning w.id`;
}

/** An attempt succeeded: the endpoint is no longer failing. */
export async function clearEndpointFailing(db: Kysely<DB>, orgId: string, endpointId: string): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({ failing_since: null })
    .where('org_id', '=', orgId)
    .where('id', '=', endpointId)
    .where('failing_since', 'is not', null)
    .execute();
}

/**
 * An attempt failed: the endpoint is failing since its first failure; answers since when, and whether enabled. The
 * clock is read by a CTE: Citus takes no stable function in an update's RETURNING, nor of a column in its SET (D342).
 */
export async function markEndpointFailing(db: Kysely<DB>, orgId: string, endpointId: string) {
  const result = await sql<{ enabled: boolean; failing_since: Date; now: Date }>`
    with clock as (select now() as now)
    update webhook_endpoints e set failing_since = coalesce(e.failing_since, clock.now)
    from clock
    where e.org_id = ${orgId} and e.id = ${endpointId}
    returning e.enabled, e.failing_since, clock.now`.execute(db);
  return result.rows[0];
}

/** Disables an endpoint for `reason` and fails its pending deliveries. */
export async function disableEndpoint(db: Kysely<DB>, orgId: string, endpointId: string, reason: string) {
  await db
    .updateTable('webhook_endpoints')
    .set({ enabled: false, disabled_reason: reason, updated_at: sql`now()` })
    .where('org_id', '=', orgId)
    .where('id', '=', endpointId)
    .execute();
  await failPendingDeliveries(db, orgId, endpointId);
}

/** A disabled endpoint receives nothing more: its pending deliveries fail (they can be retried once enabled). */
export async function failPendingDeliveries(db: Kysely<DB>, orgId: string, endpointId: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', lease_token: null, last_error: 'endpoint_disabled', updated_at: sql`now()` })
    .where('org_id', '=', orgId)
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute();
}

/** Deliveries waiting (due or scheduled), all organizations: the metrics' queue depth. */
export async function countPendingDeliveries(db: Kysely<DB>): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * One batch of retention (D63): deletes at most `batch` deliveries finished before `retentionMs` ago and at most
 * `batch` events older than that which no delivery refers to any more (both found through their indexes, migration
 * 0026); answers how many rows went, so the caller repeats while a batch came back full. Pending deliveries and
 * their events are kept whatever their age.
 */
export async function pruneWebhookHistory(
  db: Kysely<DB>,
  retentionMs: number,
  batch: number,
): Promise<{ deliveries: number; events: number }> {
  const cutoff = sql<Date>`now() - make_interval(secs => ${retentionMs / 1000})`;
  const deliveries = await sql`
    delete from webhook_deliveries d
    using (
      select org_id, id from webhook_deliveries
      where status <> 'pending' and updated_at < ${cutoff}
      limit ${batch}
    ) old
    where d.org_id = old.org_id and d.id = old.id
  `.execute(db);
  const events = await sql`
    delete from webhook_events ev
    using (
      select e.org_id, e.id from webhook_events e
      where e.created_at < ${cutoff}
        and not exists (select 1 from webhook_deliveries d where d.org_id = e.org_id and d.event_id = e.id)
      limit ${batch}
    ) old
    where ev.org_id = old.org_id and ev.id = old.id
  `.execute(db);
  return { deliveries: Number(deliveries.numAffectedRows ?? 0), events: Number(events.numAffectedRows ?? 0) };
}

// ---- The deliveries log and manual retry -------------------------------------------------------------------------

/**
 * A page of an endpoint's deliveries log, newest first, with the endpoint's existence, in one statement (D22:
 * one round trip per read): the endpoint row leads and the page joins it laterally, so an endpoint without
 * deliveries is one row of nulls and an unknown endpoint no row at all (`found` false).
 */
export async function listDeliveries(
  db: Kysely<DB>,
  orgId: string,
  endpointId: string,
  filter: { status?: string[] | undefined; afterEventId?: string | undefined; limit: number },
): Promise<{ found: boolean; rows: DeliveryRow[] }> {
  const rows = await db
    .selectFrom('webhook_endpoints as e')
    .leftJoinLateral(
      (eb) => {
        let page = eb
          .selectFrom('webhook_deliveries')
          .selectAll()
          .where('org_id', '=', orgId)
          .where('endpoint_id', '=', endpointId);
        if (filter.status && filter.status.length > 0) page = page.where('status', 'in', filter.status);
        // Event ids are time-ordered (ULIDs): newest first is descending event id, unique per endpoint.
        if (filter.afterEventId) page = page.where('event_id', '<', filter.afterEventId);
        return page.orderBy('event_id', 'desc').limit(filter.limit).as('d');
      },
      (join) => join.onTrue(),
    )
    .selectAll('d')
    .where('e.org_id', '=', orgId)
    .where('e.id', '=', endpointId)
    .orderBy('d.event_id', 'desc')
    .execute();
  return { found: rows.length > 0, rows: rows.filter(isDelivery) };
}

/** A row of the lateral page: its id is null only on the one row of nulls an empty page leaves. */
function isDelivery<Row extends { id: string | null }>(row: Row): row is Row & DeliveryRow {
  return row.id !== null;
}

export function findDelivery(db: Kysely<DB>, orgId: string, endpointId: string, id: string) {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function findDeliveryOfEvent(db: Kysely<DB>, orgId: string, endpointId: string, eventId: string) {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('endpoint_id', '=', endpointId)
    .where('event_id', '=', eventId)
    .executeTakeFirst();
}

/**
 * Makes a delivery due now. A pending one keeps its retry schedule; a finished one gets exactly one more attempt.
 * One that a worker holds right now is left alone: that attempt is the one asked for.
 */
export function retryDelivery(db: Kysely<DB>, orgId: string, endpointId: string, id: string) {
  return db
    .updateTable('webhook_deliveries')
    .set({
      attempt_limit: sql`case when status = 'pending' then attempt_limit else attempts + 1 end`,
      status: 'pending',
      next_attempt_at: sql`now()`,
      updated_at: sql`now()`,
    })
    .where('org_id', '=', orgId)
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', id)
    .where((eb) => eb.or([eb('status', '!=', 'pending'), eb('lease_token', 'is', null)]))
    .returningAll()
    .executeTakeFirst();
}
