// The broadcasts feature's answer to the platform's message status reports: the recipient moves forward, its
// conversation message and its contact's reachability follow (recipients.repo.ts `applyReport`).
import type { PlatformEventHandlers } from '../../messaging/webhooks.ts';
import { applyReport } from './recipients.repo.ts';

export const broadcastEventHandlers: PlatformEventHandlers = {
  message_status: [(trx, event, context) => applyReport(trx, context.orgId, event, context.receivedAt)],
};
