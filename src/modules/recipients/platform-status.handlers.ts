// The queue engine's answer to the platform's message status reports: the recipient moves forward, its
// conversation message and its contact's reachability follow (recipient-reports.ts `applyReport`); and to template
// status reports: a template out of APPROVED pauses its broadcasts (decisions §16). The broadcasts' rows are written
// by their owner, through the moves the wiring gives (D349).
import type { PlatformEventHandlers } from '../../messaging/inbound.ts';
import type { BroadcastMoves } from './broadcast-moves.ts';
import { applyReport } from './recipient-reports.ts';

export const broadcastStatusHandlers = (moves: BroadcastMoves): PlatformEventHandlers => ({
  message_status: [(trx, event, context) => applyReport(trx, moves, context.orgId, event, context.receivedAt)],
  // decisions §16: runs after the templates feature stored the new status (handlers run in the wiring's order).
  template_status: [
    async (trx, event, { orgId }) => {
      const templates = await trx
        .selectFrom('templates')
        .select(['id', 'status'])
        .where('org_id', '=', orgId)
        .where('platform_template_id', '=', event.platformTemplateId)
        .execute();
      const unsendable = templates.filter((template) => template.status !== 'APPROVED').map((template) => template.id);
      return (await moves.pauseForTemplates(trx, orgId, unsendable)) > 0 ? 'applied' : 'unmatched';
    },
  ],
});
