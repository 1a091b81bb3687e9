// A broadcast as the API shows it: counts and status derived from its recipients (decisions §7), one shape for
// responses and for the `broadcast.finished` event.
import type { BroadcastRow } from './broadcasts.repo.ts';
import type { BroadcastStatus } from './broadcasts.schemas.ts';

export function broadcastView(row: BroadcastRow) {
  const sent = Number(row.sent);
  const failed = Number(row.failed);
  // contract: sent + failed + pending == requested.
  const pending = row.requested - sent - failed;
  const status: BroadcastStatus =
    row.stored_status === 'cancelled' || row.stored_status === 'stopped_low_balance'
      ? row.stored_status
      : pending === 0
        ? 'completed'
        : 'in_progress';
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
    created_at: row.created_at.toISOString(),
  };
}
