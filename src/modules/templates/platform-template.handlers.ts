// The templates feature's answers to the platform's template webhooks (contract: template status; the stored
// category follows the platform's re-categorisation). Registered with the inbound processor in the wiring.
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { PlatformEventHandler, PlatformEventHandlers } from '../../messaging/inbound.ts';
import type { EventData } from '../events/event-types.ts';
import { recordEvents } from '../events/events.ts';
import * as templates from './templates.repo.ts';
import { templateView } from './templates.service.ts';

/**
 * decisions §11: `template.status_updated` with the Template after a review result or a category change, in the
 * transaction of the change, one recordEvents for the templates it moved. A deleted template is no longer one of
 * the organization's templates (its GET is a 404): it follows the platform silently.
 */
async function recordStatusUpdated(trx: Kysely<DB>, orgId: string, templateIds: string[]): Promise<void> {
  if (templateIds.length === 0) return;
  const rows = await trx
    .selectFrom('templates')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', 'in', templateIds)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute();
  await recordEvents(
    trx,
    orgId,
    rows.map((row) => ({
      type: 'template.status_updated',
      // The JSON of the view is what GET /v1/templates/{id} answers (dates as ISO strings).
      data: JSON.parse(JSON.stringify(templateView(row))) as EventData<'template.status_updated'>,
    })),
  );
}

/**
 * The stored status a template-status event leads to; undefined leaves the status as it is. Events that are not
 * states (the platform says the template stays APPROVED through FLAGGED, LOCKED, UNLOCKED) change nothing;
 * REINSTATED and UNARCHIVED return it to APPROVED; anything else is stored as given.
 */
export function templateStatusFor(event: string): string | undefined {
  const upper = event.toUpperCase();
  if (['FLAGGED', 'LOCKED', 'UNLOCKED'].includes(upper)) return undefined;
  if (upper === 'REINSTATED' || upper === 'UNARCHIVED') return 'APPROVED';
  return upper;
}

const applyTemplateStatus: PlatformEventHandler<'template_status'> = async (trx, event, context) => {
  const { orgId, occurredAt, receivedAt } = context;
  const rows = await templates.lockTemplateByPlatformId(trx, orgId, event.businessAccountId, event.platformTemplateId);
  if (rows.length === 0) return 'unmatched';
  const status = templateStatusFor(event.event);
  let outcome: 'applied' | 'stale' = 'stale';
  const moved: string[] = [];
  for (const row of rows) {
    // Template states go back and forth (APPROVED, PAUSED, APPROVED): order by the platform's time, not by rank.
    if (occurredAt && row.status_event_at && occurredAt.getTime() < row.status_event_at.getTime()) continue;
    if (status === undefined) continue;
    await templates.updateTemplateById(trx, orgId, row.id, {
      status,
      ...(status === 'REJECTED' ? { rejected_reason: event.reason ?? null } : {}),
      ...(status === 'APPROVED' ? { rejected_reason: null } : {}),
      ...(occurredAt ? { status_event_at: occurredAt } : {}),
      updated_at: receivedAt,
    });
    outcome = 'applied';
    if (status !== row.status) moved.push(row.id);
  }
  await recordStatusUpdated(trx, orgId, moved);
  return outcome;
};

const applyTemplateCategory: PlatformEventHandler<'template_category'> = async (
  trx: Transaction<DB>,
  event,
  { orgId, receivedAt },
) => {
  const rows = await templates.lockTemplateByPlatformId(trx, orgId, event.businessAccountId, event.platformTemplateId);
  if (rows.length === 0) return 'unmatched';
  // contract: the stored category follows the platform's re-categorisation.
  for (const row of rows) {
    await templates.updateTemplateById(trx, orgId, row.id, {
      category: event.newCategory.toUpperCase(),
      updated_at: receivedAt,
    });
  }
  await recordStatusUpdated(
    trx,
    orgId,
    rows.map((row) => row.id),
  );
  return 'applied';
};

export const templateReviewHandlers: PlatformEventHandlers = {
  template_status: [applyTemplateStatus],
  template_category: [applyTemplateCategory],
};
