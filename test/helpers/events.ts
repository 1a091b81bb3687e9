// The events an organization has recorded (decisions §11), as their payloads' `data`, oldest first: what a webhook
// endpoint subscribed to them would be sent.
import type { Harness } from './harness.ts';

export async function recordedEvents(h: Harness, orgId: string, type: string) {
  const rows = await h.database.db
    .selectFrom('webhook_events')
    .select('payload')
    .where('org_id', '=', orgId)
    .where('type', '=', type)
    .orderBy('created_at')
    .execute();
  return rows.map((row) => {
    const payload = typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload;
    return payload.data ?? payload;
  });
}
