// A broadcast as the API shows it: read with the counts its recipients derive and its status (decisions §7), one
// shape for responses and for the `broadcast.started` and `broadcast.finished` events that the queue records. Below
// the broadcasts feature (which reads and lists through it), so that the worker's steps never import that feature.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';

export const BROADCAST_STATUSES = [
  'scheduled',
  'preparing',
  'in_progress',
  'paused',
  'completed',
  'stopped_low_balance',
  'cancelled',
] as const;
export type BroadcastStatus = (typeof BROADCAST_STATUSES)[number];

/** A recipient's states as the API shows them (`received`: the platform's word for a message it took). */
export const RECIPIENT_STATUSES = ['received', 'sending', 'sent', 'delivered', 'read', 'failed'] as const;

/** Statuses a broadcast row stores; the others are derived (decisions §7, §16). */
export const STORED_STATUSES = ['cancelled', 'stopped_low_balance', 'paused'] as const;

// contract: `sent` counts recipients in sent, delivered or read; `failed` those in failed. One statement reads a
// broadcast and its counts, so a read is always a consistent snapshot. Each count reads its statuses' ranges of the
// listing index (org, status, broadcast, position; D211), not every recipient of the broadcast.
// The organization is named in each count (D317: a statement Citus routes to one shard).
const countOf = (orgId: string, statuses: readonly string[]) =>
  sql<number>`(select count(*)::int from broadcast_recipients r where r.org_id = ${orgId}
    and r.status in (${sql.join(statuses.map((status) => sql.lit(status)))}) and r.broadcast_id = broadcasts.id)`;
const counts = (orgId: string) =>
  sql<{ sent: number; failed: number }>`(select ${countOf(orgId, ['sent', 'delivered', 'read'])} as sent,
  ${countOf(orgId, ['failed'])} as failed)`.as('c');

export function selectBroadcasts(db: Kysely<DB>, orgId: string) {
  return db
    .selectFrom('broadcasts')
    .leftJoinLateral(counts(orgId), (join) => join.onTrue())
    .select([
      'broadcasts.id',
      'broadcasts.template_id',
      'broadcasts.template_name',
      'broadcasts.template_language',
      'broadcasts.channel_id',
      'broadcasts.stored_status',
      'broadcasts.requested',
      'broadcasts.origin',
      'broadcasts.retry_of',
      'broadcasts.created_at',
      'broadcasts.name',
      'broadcasts.audience',
      'broadcasts.send_at',
      'broadcasts.started_at',
      'broadcasts.status_reason',
      'broadcasts.held_until',
      'broadcasts.phase',
      sql<number>`coalesce(c.sent, 0)`.as('sent'),
      sql<number>`coalesce(c.failed, 0)`.as('failed'),
    ])
    .where('broadcasts.org_id', '=', orgId);
}

export type BroadcastRow = Awaited<ReturnType<ReturnType<typeof selectBroadcasts>['executeTakeFirstOrThrow']>>;

export function broadcastView(row: BroadcastRow) {
  const sent = Number(row.sent);
  const failed = Number(row.failed);
  // contract: sent + failed + pending == requested.
  const pending = row.requested - sent - failed;
  // decisions §16: a stored status wins; then the phase of an audience broadcast not yet fully added.
  const status: BroadcastStatus = (STORED_STATUSES as readonly string[]).includes(row.stored_status ?? '')
    ? (row.stored_status as BroadcastStatus)
    : row.phase === 'scheduled' || row.phase === 'preparing'
      ? row.phase
      : pending === 0
        ? 'completed'
        : 'in_progress';
  const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());
  return {
    id: row.id,
    template_id: row.template_id,
    template_name: row.template_name,
    template_language: row.template_language,
    channel_id: row.channel_id,
    status,
    requested: row.requested,
    sent,
    failed,
    pending,
    // The ContactOrigin vocabulary (`API`); rows store the lower-case `api` they always had (CHANGELOG).
    origin: row.origin.toUpperCase(),
    retry_of: row.retry_of,
    name: row.name,
    audience: (row.audience ?? null) as Record<string, unknown> | null,
    send_at: iso(row.send_at),
    started_at: iso(row.started_at),
    status_reason: row.status_reason,
    held_until: iso(row.held_until),
    created_at: row.created_at.toISOString(),
  };
}
