// Every periodic task the worker runs, scheduled here alone: the fan-out (claiming while there is work, in bounded
// slices), the reconciler of hand-offs whose answer was lost, the webhook deliveries, and the maintenance that
// keeps the queue tables small.
import type { FastifyBaseLogger } from 'fastify';
import { DEFAULT_AUDIENCE_CHUNK, FANOUT_DEFAULTS, RETENTION_DEFAULTS } from '../config.ts';
import type { Database } from '../db/database.ts';
import { analyzeChanged } from '../db/migrate.ts';
import type { Clock } from '../lib/clock.ts';
import type { AssistantWorker } from '../modules/automation/engine/assistant-worker.ts';
import type { ConversationChanges } from '../modules/conversations/conversation-changes.ts';
import type { AudienceRunner } from '../modules/recipients/audience-runner.ts';
import { purgeSendWindows } from '../modules/recipients/number-caps.ts';
import type { Fanout } from './fanout.ts';
import type { ReplyHandoffs, Waker } from './reply-handoffs.ts';
import { pruneHistory } from './retention.ts';
import type { WebhookDeliverer } from './webhook-deliveries.ts';
import type { WorkerTask } from './worker.ts';

export interface WorkerTaskOptions {
  /** How often an idle worker looks for recipients to hand off. */
  pollMs: number;
  /** Fan-out batches a worker process works on at once. */
  batchesInFlight: number;
  /** decisions §16: contacts added per chunk of an audience broadcast. */
  audienceChunk: number;
  /** D182: how long webhook history and the platform's webhook ids are kept. */
  retention: { webhookHistoryMs: number; platformEventsMs: number };
}

const DEFAULTS: WorkerTaskOptions = {
  pollMs: FANOUT_DEFAULTS.pollMs,
  batchesInFlight: FANOUT_DEFAULTS.batchesInFlight,
  audienceChunk: DEFAULT_AUDIENCE_CHUNK,
  retention: RETENTION_DEFAULTS,
};
const FANOUT_SLICE_MS = 2000;
const RECONCILE_INTERVAL_MS = 30_000;
/** D359: how soon a broadcast whose end no move saw (two moves of its last rows at once) finishes. */
const END_SWEEP_INTERVAL_MS = 2000;
const ANALYZE_INTERVAL_MS = 30_000;
const SNOOZE_INTERVAL_MS = 15_000;

export interface WorkerTaskDeps {
  database: Database;
  /** §19's change functions (a snooze's end), with auto-assignment's turn counter (D350). */
  changes: ConversationChanges;
  fanout: Fanout;
  audiences: AudienceRunner;
  deliveries: WebhookDeliverer;
  /** decisions §15: the replies' hand-offs, and what wakes them when a reply is accepted. */
  replies: ReplyHandoffs;
  replyWaker: Waker;
  /** decisions §20: the autonomous assistant's answers. */
  assistantJobs: AssistantWorker;
  log: FastifyBaseLogger;
  clock: Clock;
  options?: Partial<WorkerTaskOptions> | undefined;
}

export function workerTasks(deps: WorkerTaskDeps): WorkerTask[] {
  const { database, fanout, deliveries, log, clock } = deps;
  const options = { ...DEFAULTS, ...deps.options };
  const { db } = database;
  const { audiences } = deps;
  const tasks: WorkerTask[] = [
    {
      // decisions §16: starts due audience broadcasts and adds their recipients, chunk after chunk, for a bounded
      // slice (the fan-out hands off each chunk as soon as it commits).
      name: 'audience-broadcasts',
      intervalMs: options.pollMs,
      run: async () => {
        const started = Date.now();
        if ((await audiences.runOnce()) === 0) return 'idle';
        while ((await audiences.runOnce()) > 0 && Date.now() - started < FANOUT_SLICE_MS) {}
      },
    },
    {
      name: 'fanout',
      intervalMs: options.pollMs,
      // Keeps claiming while there is work, for a bounded slice, then yields to the other tasks.
      // Several batches in flight at once: a batch spends most of its time waiting on round trips, so claiming
      // the next one meanwhile keeps the database busy. Each loop claims for itself (SKIP LOCKED).
      run: async () => {
        const started = Date.now();
        let handled = 0;
        const loop = async () => {
          for (let batch = await fanout.runOnce(); batch > 0; batch = await fanout.runOnce()) {
            handled += batch;
            if (Date.now() - started >= FANOUT_SLICE_MS) break;
          }
        };
        await Promise.all(Array.from({ length: Math.max(1, options.batchesInFlight) }, loop));
        if (handled === 0) return 'idle';
        log.debug({ handled }, 'fan-out handed off recipients');
      },
    },
    {
      // decisions §15: woken at once by an accepted reply; polling besides (a retry that came due).
      name: 'reply-handoffs',
      intervalMs: options.pollMs,
      wakeup: deps.replyWaker,
      run: async () => {
        const started = Date.now();
        if ((await deps.replies.runOnce()) === 0) return 'idle';
        while ((await deps.replies.runOnce()) > 0 && Date.now() - started < FANOUT_SLICE_MS) {}
      },
    },
    {
      // decisions §20: the assistant's jobs; each model call may take up to its deadline, other tasks go on.
      name: 'assistant-jobs',
      intervalMs: options.pollMs,
      run: async () => {
        const started = Date.now();
        if ((await deps.assistantJobs.runOnce()) === 0) return 'idle';
        while ((await deps.assistantJobs.runOnce()) > 0 && Date.now() - started < FANOUT_SLICE_MS) {}
      },
    },
    {
      name: 'reconcile-reply-handoffs',
      intervalMs: Math.min(RECONCILE_INTERVAL_MS, Math.max(1000, fanout.reconcileAfterMs)),
      run: async () => {
        const settled = await deps.replies.reconcile();
        if (settled > 0) log.warn({ settled }, 'reply hand-offs never confirmed by the platform were failed');
      },
    },
    {
      name: 'reconcile-handoffs',
      intervalMs: Math.min(RECONCILE_INTERVAL_MS, Math.max(1000, fanout.reconcileAfterMs)),
      run: async () => {
        const settled = await fanout.reconcile();
        if (settled > 0) log.warn({ settled }, 'hand-offs never confirmed by the platform were failed and refunded');
      },
    },
    {
      // D359: the end check of a move locks a broadcast only when it looks ended; two moves of its last rows, each
      // seeing the other's as pending, leave it to this sweep.
      name: 'broadcast-ends',
      intervalMs: END_SWEEP_INTERVAL_MS,
      run: async () => {
        if ((await fanout.finishEnded()) === 0) return 'idle';
      },
    },
    // Deliveries run in their own task beside the fan-out, so a slow endpoint never holds the fan-out back.
    deliveries.task,
    {
      // D182: finished webhook history, the platform's old webhook ids and expired idempotency keys, in batches.
      name: 'retention',
      intervalMs: RETENTION_DEFAULTS.intervalMs,
      run: async () => {
        const removed = await pruneHistory(db, clock.now(), { ...RETENTION_DEFAULTS, ...options.retention });
        if (Object.values(removed).some((count) => count > 0)) log.info(removed, 'retention: pruned old history');
      },
    },
    {
      // decisions §19: a snooze's time passing moves its conversation to `open` within a minute.
      name: 'snooze-ends',
      intervalMs: SNOOZE_INTERVAL_MS,
      run: async () => {
        while ((await deps.changes.endSnoozes(db, clock.now())) > 0) {}
      },
    },
    {
      name: 'purge-send-windows',
      intervalMs: 60_000,
      run: () => purgeSendWindows(db, Math.floor(clock.now().getTime() / 1000)),
    },
  ];
  // PGlite has no autovacuum: the tables that changed get fresh planner statistics, as autovacuum would (D205).
  if (database.kind === 'pglite')
    tasks.push({ name: 'analyze', intervalMs: ANALYZE_INTERVAL_MS, run: () => analyzeChanged(db) });
  return tasks;
}
