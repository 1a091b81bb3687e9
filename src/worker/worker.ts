// The background loop that runs beside (or apart from) the HTTP server. Each task runs on its own interval,
// never overlapping itself; stop() waits for running tasks to finish. A task that fails is logged and backs off
// (doubling up to MAX_BACKOFF_MS), and every task pauses while `paused()` says so (the database is unreachable):
// nothing a task throws ever leaves the loop (D24). A task whose run found nothing to do (it answers 'idle') looks
// again later and later, doubling up to the product's poll (WORKER_POLL_MS' default), until a run finds work or it is
// woken (D354): a WORKER_POLL_MS below it speeds up queues with work, not the look of idle ones.
import type { FastifyBaseLogger } from 'fastify';
import { WORKER_POLL_MS } from '../config.ts';
import { isPoolBusy } from '../db/pool-gate.ts';

export interface WorkerTask {
  name: string;
  intervalMs: number;
  /** 'idle': the run found nothing to do, so the next one may wait (D354). */
  // biome-ignore lint/suspicious/noConfusingVoidType: a task that never reports idleness returns nothing.
  run(): Promise<void | 'idle'>;
  /** Runs the task at once when woken (and once more after a run that was under way when woken). */
  wakeup?: { subscribe(listener: () => void): () => void };
}

export interface Worker {
  stop(): Promise<void>;
}

export interface WorkerOptions {
  /** While true no task starts (the database is known to be unreachable); checked on every tick. */
  paused?: () => boolean;
  /** The longest an idle task waits between looks (D354); at least its interval. Default WORKER_POLL_MS' default. */
  idleMostMs?: number;
}

// Short enough that the worker is back within a few seconds of the database (D24: back within 3 s).
const FIRST_BACKOFF_MS = 250;
export const MAX_BACKOFF_MS = 2000;

export function startWorker(tasks: WorkerTask[], log: FastifyBaseLogger, options: WorkerOptions = {}): Worker {
  let stopping = false;
  const running = new Set<Promise<void>>();
  const timers: NodeJS.Timeout[] = [];
  const unsubscribes: (() => void)[] = [];
  let pausedLogged = false;

  const isPaused = () => {
    let paused = false;
    try {
      paused = options.paused?.() ?? false;
    } catch {
      paused = false;
    }
    if (paused !== pausedLogged) {
      pausedLogged = paused;
      if (paused) log.warn('worker paused: the database is unreachable');
      else log.info('worker resumed');
    }
    return paused;
  };

  for (const task of tasks) {
    let busy = false;
    let failures = 0;
    let notBefore = 0;
    let again = false;
    // D354: the idle back-off, apart from the failures' (a wake-up ends the first, never the second).
    const idleMostMs = Math.max(task.intervalMs, options.idleMostMs ?? WORKER_POLL_MS);
    let idleRuns = 0;
    let idleUntil = 0;
    const tick = () => {
      const now = Date.now();
      if (stopping || busy || now < notBefore || now < idleUntil || isPaused()) return;
      busy = true;
      again = false;
      const run = Promise.resolve()
        .then(() => task.run())
        .then(
          (result) => {
            failures = 0;
            notBefore = 0;
            if (result === 'idle') {
              idleRuns = Math.min(idleRuns + 1, 30);
              // The timer ticks every intervalMs: the wait is counted from this run's end.
              idleUntil = Date.now() + Math.min(idleMostMs, task.intervalMs * 2 ** idleRuns) - task.intervalMs;
            } else {
              idleRuns = 0;
              idleUntil = 0;
            }
          },
          (error: unknown) => {
            failures++;
            const backoff = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (failures - 1));
            notBefore = Date.now() + backoff;
            // A busy pool (D129) is load, not a fault: the task tries again after the back-off.
            if (isPoolBusy(error))
              log.warn({ err: error, task: task.name, backoffMs: backoff }, 'worker task: pool busy');
            else log.error({ err: error, task: task.name, failures, backoffMs: backoff }, 'worker task failed');
          },
        )
        .finally(() => {
          busy = false;
          running.delete(run);
          if (again) {
            // Woken during an idle run: the wake-up may be about work that run did not see.
            idleRuns = 0;
            idleUntil = 0;
            tick();
          }
        });
      running.add(run);
    };
    timers.push(setInterval(tick, task.intervalMs));
    // A wake-up during a run runs the task once more right after it: the run may have looked before the new work.
    const woken = () => {
      idleRuns = 0;
      idleUntil = 0;
      if (busy) again = true;
      else tick();
    };
    if (task.wakeup) unsubscribes.push(task.wakeup.subscribe(woken));
  }

  return {
    async stop() {
      stopping = true;
      for (const timer of timers) clearInterval(timer);
      for (const unsubscribe of unsubscribes) unsubscribe();
      await Promise.all(running);
    },
  };
}
