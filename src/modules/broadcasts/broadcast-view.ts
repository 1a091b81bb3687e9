// A broadcast as the API shows it: counts and status derived from its recipients (decisions §7), one shape for
// responses and for the `broadcast.finished` event.
import { type BroadcastRow, STORED_STATUSES } from './broadcasts.repo.ts';
import type { BroadcastStatus } from './broadcasts.schemas.ts';

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
