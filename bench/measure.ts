// Latency and throughput of one scenario: `total` requests, `concurrency` at a time; and a process's RSS.
import { readFileSync } from 'node:fs';

export interface Result {
  name: string;
  requests: number;
  p50: number;
  p99: number;
  max: number;
  throughput: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

export async function measure(
  name: string,
  total: number,
  concurrency: number,
  request: (i: number) => Promise<void>,
): Promise<Result> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < total) {
      const i = next++;
      const t0 = performance.now();
      await request(i);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    name,
    requests: total,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? 0,
    throughput: total / elapsed,
  };
}

export function table(results: Result[]): string {
  const lines = [
    '| Scenario | Requests | p50 ms | p99 ms | max ms | req/s |',
    '|---|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.name} | ${r.requests} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.max.toFixed(1)} | ${r.throughput.toFixed(0)} |`,
    ),
  ];
  return lines.join('\n');
}

/** Resident set size of process `pid`, in bytes (0 once it is gone). */
export function rssOf(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/**
 * Samples the resident set size of this process (or of process `pid`) every 50 ms; `peak()` is the largest seen
 * since `reset()`.
 */
export function rssSampler(pid?: number) {
  let peak = 0;
  const sample = () => {
    peak = Math.max(peak, pid === undefined ? process.memoryUsage.rss() : rssOf(pid));
  };
  const timer = setInterval(sample, 50);
  timer.unref();
  return {
    reset: () => {
      peak = 0;
      sample();
    },
    peak: () => {
      sample();
      return peak;
    },
    stop: () => clearInterval(timer),
  };
}

export const mb = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MB`;

/** CPU seconds (user + system) process `pid` has used so far, from /proc/<pid>/stat (0 once it is gone). */
export function cpuSecondsOf(pid: number | string): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}
const CLOCK_TICKS = 100;

/**
 * CPU seconds of a set of processes from one reading to the next: `read()` adds the processes `pids()` names now
 * (a process first seen later counts from 0, one gone keeps its last reading), `since()` sums their CPU since the
 * first reading.
 */
export function cpuMeter(pids: () => Promise<number[]> | number[]) {
  const start = new Map<number, number>();
  const last = new Map<number, number>();
  const read = async (first: boolean) => {
    for (const pid of await pids()) {
      const seconds = cpuSecondsOf(pid);
      if (seconds === 0 && last.has(pid)) continue;
      if (!start.has(pid)) start.set(pid, first ? seconds : 0);
      last.set(pid, seconds);
    }
  };
  return {
    start: () => read(true),
    /** CPU seconds used since `start()`, reading the processes again. */
    async since() {
      await read(false);
      let total = 0;
      for (const [pid, seconds] of last) total += seconds - (start.get(pid) ?? 0);
      return total;
    },
  };
}
