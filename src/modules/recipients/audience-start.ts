// decisions §16, the start of an audience broadcast (at `send_at`, by the worker): exactly one start however many
// workers look, because the due broadcasts are locked (SKIP LOCKED) and started only while `started_at` is null.
// The template must still be APPROVED, else the broadcast is `cancelled` with `template_not_sendable` and nothing
// is sent; otherwise its components are built once (with the contact's markers), the snapshot time is taken and
// `broadcast.started` is recorded in the same transaction.
import { type Kysely, sql, type Transaction } from 'kysely';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB } from '../../db/schema.ts';
import { claimFairly } from '../../lib/fair-claims.ts';
import type { TemplateComponent } from '../../messaging/platform.ts';
import { recordEvents } from '../events/events.ts';
import { analyzeTemplate, type CatalogSendDefaults, type RecipientInput } from '../templates/send-requirements.ts';
import { findTemplate } from '../templates/templates.repo.ts';
import { audienceComponents, contactTokens } from './audience-components.ts';
import type { BroadcastMoves } from './broadcast-moves.ts';
import { broadcastView, selectBroadcasts } from './broadcast-view.ts';
import { recordFinished } from './recipient-events.ts';

export interface StartDeps {
  db: Kysely<DB>;
  /** The broadcasts' owner's writes of the queue's moves (D349), given by the wiring. */
  moves: BroadcastMoves;
  propertyKeys(db: Kysely<DB>, orgId: string): Promise<readonly string[]>;
}

type Due = { org_id: string; id: string; template_id: string; audience_input: unknown };

/** The components to send, or undefined when the template can no longer be sent. */
async function prepare(deps: StartDeps, trx: Transaction<DB>, row: Due) {
  const template = await findTemplate(trx, row.org_id, row.template_id);
  if (template?.status !== 'APPROVED') return undefined;
  const components = template.components as unknown as TemplateComponent[];
  const catalogSendDefaults = (template.catalog_send_defaults ?? null) as CatalogSendDefaults | null;
  const requirements = analyzeTemplate(components, {
    propertyKeys: await deps.propertyKeys(trx, row.org_id),
    catalogSendDefaults,
  });
  if (requirements.never_sendable_reason) return undefined;
  // The template may have changed since the 202: a request it no longer accepts cannot be sent either.
  const built = audienceComponents(requirements, components, row.audience_input as RecipientInput, catalogSendDefaults);
  if (!built.ok) return undefined;
  return { components: built.components, tokens: await contactTokens(trx, row.org_id, built.sources) };
}

async function start(deps: StartDeps, trx: Transaction<DB>, row: Due): Promise<void> {
  const prepared = await prepare(deps, trx, row);
  if (!prepared) {
    await deps.moves.cancelAtStart(trx, row.org_id, row.id);
    await recordFinished(trx, deps.moves, row.org_id, [row.id]);
    return;
  }
  await deps.moves.startAudience(trx, row.org_id, row.id, prepared);
  const started = await selectBroadcasts(trx, row.org_id).where('broadcasts.id', '=', row.id).executeTakeFirstOrThrow();
  await recordEvents(trx, row.org_id, [{ type: 'broadcast.started', data: broadcastView(started) }]);
}

/**
 * Starts the broadcasts that are due (at most `limit`); answers how many it started or cancelled. One organization
 * per transaction, an even share each, the longest due first (D318).
 */
export async function startDueBroadcasts(deps: StartDeps, limit = 10): Promise<number> {
  const due = (trx: Kysely<DB>) =>
    trx
      .selectFrom('broadcasts')
      .where('started_at', 'is', null)
      .where('phase', 'is not', null)
      .where('stored_status', 'is', null)
      .where(sql`coalesce(send_at, created_at)`, '<=', sql<Date>`now()`);
  const orgs = await due(deps.db)
    .select('org_id')
    .groupBy('org_id')
    .orderBy(sql`min(coalesce(send_at, created_at))`)
    .orderBy('org_id')
    .limit(limit)
    .execute();
  const started = await claimFairly(
    orgs.map((row) => row.org_id),
    limit,
    (orgId, max) =>
      transactionWithRetry(deps.db, async (trx) => {
        const rows = await due(trx)
          .select(['org_id', 'id', 'template_id', 'audience_input'])
          .where('org_id', '=', orgId)
          .orderBy(sql`coalesce(send_at, created_at)`)
          .limit(max)
          .forUpdate()
          .skipLocked()
          .execute();
        for (const row of rows) await start(deps, trx, row);
        return rows;
      }),
  );
  return started.length;
}
