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

describe('an idle task (D354: a run that found nothing looks again later and later, up to the cap)', () => {
  it('waits longer after each idle run up to idleMostMs, polls at its interval again once a run finds work', async () => {
    const { log } = capturingLog();
    const runs: number[] = [];
    let work = false;
    worker = startWorker(
      [
        {
          name: 'idle',
          intervalMs: 10,
          run: async () => {
            runs.push(performance.now());
            return work ? undefined : 'idle';
          },
        },
      ],
      log,
      { idleMostMs: 160 },
    );
    await waitUntil(() => runs.length >= 7, { message: 'seven idle runs' });
    const gaps = runs.slice(1).map((at, index) => at - (runs[index] as number));
    // 20, 40, 80, 160, 160, … ms, less one tick of the 10 ms timer at most (its ticks are not aligned with the runs;
    // lower bounds: a timer never fires early); without the back-off, 10 ms each.
    expect(gaps[2]).toBeGreaterThanOrEqual(69);
    expect(gaps[4]).toBeGreaterThanOrEqual(149);
    work = true;
    const busyFrom = runs.length;
    await waitUntil(() => runs.length >= busyFrom + 6, { message: 'six runs with work' });
    const busyGaps = runs.slice(busyFrom + 2).map((at, index) => at - (runs[busyFrom + 1 + index] as number));
    // Back at its interval: four runs after work is found take less than one capped wait each.
    expect(busyGaps.reduce((sum, gap) => sum + gap, 0)).toBeLessThan(4 * 160);
  });

  it('runs at once when woken while it waits, whatever the wait left', async () => {
    const { log } = capturingLog();
    const waker = createWaker();
    let runs = 0;
    worker = startWorker(
      [
        {
          name: 'idle-woken',
          intervalMs: 10,
          wakeup: waker,
          run: async () => {
            runs += 1;
            return 'idle';
          },
        },
      ],
      log,
      { idleMostMs: 60_000 },
    );
    // After seven idle runs the next look is ≈ 1.3 s away (10 ms doubled seven times), then 2.6 s, … up to a minute.
    await waitUntil(() => runs >= 7, { message: 'seven idle runs' });
    const before = runs;
    const wokenAt = performance.now();
    waker.wake();
    await waitUntil(() => runs > before, { message: 'a run after the wake-up', timeoutMs: 1000, intervalMs: 2 });
    expect(performance.now() - wokenAt).toBeLessThan(1000);
  });
});
