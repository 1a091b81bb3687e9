// The worker loop (issue 13): a failing task is logged and backs off instead of leaving the loop, and no task runs
// while the loop is paused (the database is unreachable).
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startWorker, type Worker } from '../../../src/worker/worker.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
    let runs = 0;
    worker = startWorker(
      [
        {
          name: 'always-fails',
          intervalMs: 10,
          run: async () => {
            runs++;
            throw new Error('database unreachable');
          },
        },
      ],
      log,
    );
    await sleep(1000);
    // Without back-off a 10 ms task would run about 100 times in a second; 250 + 500 ms of back-off leaves ~3.
    expect(runs).toBeGreaterThanOrEqual(2);
    expect(runs).toBeLessThanOrEqual(5);
    const failures = lines.filter((line) => line.msg === 'worker task failed');
    expect(failures.length).toBe(runs);
    expect(failures[1]).toMatchObject({ task: 'always-fails', failures: 2, backoffMs: 500 });
  });

  it('runs nothing while paused and resumes when the pause ends, saying so in the log', async () => {
    const { log, lines } = capturingLog();
    let paused = true;
    let runs = 0;
    worker = startWorker([{ name: 'count', intervalMs: 10, run: async () => void runs++ }], log, {
      paused: () => paused,
    });
    await sleep(200);
    expect(runs).toBe(0);
    paused = false;
    await sleep(200);
    expect(runs).toBeGreaterThan(0);
    expect(lines.map((line) => line.msg)).toEqual(
      expect.arrayContaining(['worker paused: the database is unreachable', 'worker resumed']),
    );
  });
});
