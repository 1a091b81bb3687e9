// Retention (D182): what grows with every event is pruned in bounded batches, each its own short
// statement, repeated while a batch comes back full and the run's time budget lasts, so a backlog (a first run on a
// year of history) is worked off over a few runs without one long transaction. Each feature owns its rule and its
// statement; this only schedules them. Broadcasts' recipients and conversations' messages are records of what was
// sent and stay readable: they are never pruned.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { purgeExpiredIdempotencyKeys } from '../http/idempotency.ts';
import { pruneProcessedEvents } from '../messaging/inbound.ts';
import { pruneRuleRuns, RULE_RUNS_RETENTION_MS } from '../modules/automation/automation-rules.repo.ts';
import { pruneExpiredFiles } from '../modules/files/files.service.ts';
import { pruneWebhookHistory } from '../modules/webhook-endpoints/deliveries.repo.ts';

export interface RetentionSettings {
  /** WEBHOOK_RETENTION_DAYS: finished webhook deliveries and their events (30 days, as Stripe keeps events). */
  webhookHistoryMs: number;
  /** PLATFORM_EVENT_RETENTION_DAYS: the platform's webhook ids kept to drop redeliveries (14 days). */
  platformEventsMs: number;
  /** Rows per statement. */
  batch: number;
  /** Time one run may spend on each kind before leaving the rest to the next run. */
  budgetMs: number;
}

export interface RetentionResult {
  webhookDeliveries: number;
  webhookEvents: number;
  platformEvents: number;
  idempotencyKeys: number;
  /** decisions §20: automation rules' runs, kept 30 days. */
  ruleRuns: number;
  /** D294: uploaded files past their `expires_at` (30 days). */
  files: number;
}

/** Runs `step` while it reports a full batch and the budget lasts; answers the rows it removed. */
async function inBatches(step: () => Promise<number>, batch: number, budgetMs: number): Promise<number> {
  const started = Date.now();
  let total = 0;
  for (;;) {
    const removed = await step();
    total += removed;
    if (removed < batch || Date.now() - started >= budgetMs) return total;
  }
}

export async function pruneHistory(db: Kysely<DB>, now: Date, settings: RetentionSettings): Promise<RetentionResult> {
  const { batch, budgetMs } = settings;
  let webhookDeliveries = 0;
  let webhookEvents = 0;
  await inBatches(
    async () => {
      const removed = await pruneWebhookHistory(db, settings.webhookHistoryMs, batch);
      webhookDeliveries += removed.deliveries;
      webhookEvents += removed.events;
      return Math.max(removed.deliveries, removed.events);
    },
    batch,
    budgetMs,
  );
  const platformEvents = await inBatches(
    () => pruneProcessedEvents(db, now, settings.platformEventsMs, batch),
    batch,
    budgetMs,
  );
  const idempotencyKeys = await inBatches(() => purgeExpiredIdempotencyKeys(db, batch), batch, budgetMs);
  const ruleRuns = await inBatches(() => pruneRuleRuns(db, now, RULE_RUNS_RETENTION_MS, batch), batch, budgetMs);
  // Files are large: a tenth of the batch per statement.
  const fileBatch = Math.max(1, Math.ceil(batch / 10));
  const files = await inBatches(() => pruneExpiredFiles(db, now, fileBatch), fileBatch, budgetMs);
  return { webhookDeliveries, webhookEvents, platformEvents, idempotencyKeys, ruleRuns, files };
}
