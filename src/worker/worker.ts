// The background loop that runs beside (or apart from) the HTTP server. Each task runs on its own interval,
// never overlapping itself; stop() waits for running tasks to finish.
import type { FastifyBaseLogger } from 'fastify';

export interface WorkerTask {
  name: string;
  intervalMs: number;
  run(): Promise<void>;
}

export interface Worker {
  stop(): Promise<void>;
}

export function startWorker(tasks: WorkerTask[], log: FastifyBaseLogger): Worker {
  let stopping = false;
  const running = new Set<Promise<void>>();
  const timers: NodeJS.Timeout[] = [];

  for (const task of tasks) {
    let busy = false;
    const tick = () => {
      if (stopping || busy) return;
      busy = true;
      const run = task
        .run()
        .catch((error: unknown) => log.error({ err: error, task: task.name }, 'worker task failed'))
        .finally(() => {
          busy = false;
          running.delete(run);
        });
      running.add(run);
    };
    timers.push(setInterval(tick, task.intervalMs));
  }

  return {
    async stop() {
      stopping = true;
      for (const timer of timers) clearInterval(timer);
      await Promise.all(running);
    },
  };
}
