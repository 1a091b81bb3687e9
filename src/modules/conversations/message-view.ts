// A message as the API shows it (the Message schema): the row without what stays inside (the organization, the
// platform's media id, the row's clock). The platform's own words for a failure are shown, in `error_message`,
// beside the stable code in `error` (D134).
import type { Static } from 'typebox';
import type { MessageRow } from './conversations.repo.ts';
import type { MessageMediaSchema } from './conversations.schemas.ts';

export type MessageMedia = Static<typeof MessageMediaSchema>;

export function messageView(row: MessageRow) {
  const {
    org_id: _org,
    updated_at: _updated,
    platform_media_id: _mediaId,
    window_account_id: _windowAccount,
    received_at: _received,
    ...message
  } = row;
  return {
    ...message,
    error_message: row.status === 'failed' ? (row.error_message ?? null) : null,
    media: (row.media ?? null) as MessageMedia | null,
    reply_to: row.reply_to ?? null,
  };
}

export type MessageView = ReturnType<typeof messageView>;

/** The view as an event's `data` carries it (JSON: times as ISO strings). */
export function messageEventData(row: MessageRow) {
  const view = messageView(row);
  const iso = (value: Date | null) => (value ? value.toISOString() : null);
  return {
    ...view,
    created_at: view.created_at.toISOString(),
    sent_at: iso(view.sent_at),
    delivered_at: iso(view.delivered_at),
    read_at: iso(view.read_at),
    failed_at: iso(view.failed_at),
  };
}
