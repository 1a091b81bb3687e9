// The worker loop (decisions D24): a failing task is logged and backs off instead of leaving the loop, and no task runs
// while the loop is paused (the database is unreachable).
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createWaker } from '../../../src/worker/reply-handoffs.ts';
import { startWorker, type Worker } from '../../../src/worker/worker.ts';
import { waitUntil } from '../../helpers/wait.ts';

function capturingLog() {
  const lines: Record<string, unknown>[] = [];
  const log = pino(
    { level: 'debug' },
    { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  ) as unknown as FastifyBaseLogger;
  return { log, lines };
}

let worker: Worker | undefined;
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
});

describe('startWorker', () => {
  it('logs a failing task and backs off: far fewer runs than ticks, and the loop keeps going', async () => {
    const { log, lines } = capturingLog();
    const runs: number[] = [];
    worker = startWorker(
      [
        {
          name: 'always-fails',
          intervalMs: 10,
          run: async () => {
            runs.push(performance.now());
            throw new Error('database unreachable');
          },
        },
      ],
      log,
    );
    const failed = () => lines.filter((line) => line.msg === 'worker task failed');
    const failures = await waitUntil(() => failed().length >= 3 && failed(), { message: 'three failures' });
    expect(failures.length).toBe(runs.length);
    expect(failures[1]).toMatchObject({ task: 'always-fails', failures: 2, backoffMs: 500 });
    // Without back-off a 10 ms task would run again 10 ms later; each run waits out its back-off first (a timer
    // never fires early, so these are lower bounds, not windows).
    expect(runs[1]! - runs[0]!).toBeGreaterThanOrEqual(245);
    expect(runs[2]! - runs[1]!).toBeGreaterThanOrEqual(495);
  });

  it('runs nothing while paused and resumes when the pause ends, saying so in the log', async () => {
    const { log, lines } = capturingLog();
    let paused = true;
    let runs = 0;
    let pausedTicks = 0;
    worker = startWorker([{ name: 'count', intervalMs: 10, run: async () => void runs++ }], log, {
      paused: () => {
        if (paused) pausedTicks++;
        return paused;
      },
    });
    await waitUntil(() => pausedTicks >= 10, { message: 'ten ticks while paused' });
    expect(runs).toBe(0);
    paused = false;
    await waitUntil(() => runs > 0, { message: 'a run after the pause' });
    expect(runs).toBeGreaterThan(0);
    expect(lines.map((line) => line.msg)).toEqual(
      expect.arrayContaining(['worker paused: the database is unreachable', 'worker resumed']),
    );
  });
});

describe('a task woken (decisions §15: replies wake their hand-off loop)', () => {
  it('runs at once when woken, and once more after a run that was under way when woken', async () => {
    const { log } = capturingLog();
    const waker = createWaker();
    let runs = 0;
    let release: (() => void) | undefined;
    worker = startWorker(
      [
        {
          name: 'woken',
          intervalMs: 60_000,
          wakeup: waker,
          run: async () => {
            runs += 1;
            if (runs === 1) await new Promise<void>((resolve) => (release = resolve));
          },
        },
      ],
      log,
    );
    waker.wake();
    await waitUntil(() => runs === 1 && release);
    // Woken twice during the first run: one more run after it, not two.
    waker.wake();
    waker.wake();
    release?.();
    await waitUntil(() => runs >= 2);
    // A further run would start in the turn the second one ended: let that turn pass.
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs).toBe(2);
  });
});
