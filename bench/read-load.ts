// The machinery of `npm run bench:reads` (bench/reads.ts): servers as child processes, autocannon load against
// them, and what each costs (CPU time per request from /proc, peak RSS).
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { freePort } from '../test/helpers/process.ts';
import { rssOf } from './measure.ts';

export const CONNECTIONS = 10;

export interface Target {
  orgId: string;
  key: string;
  contactId: string;
}

export interface Started {
  child: ChildProcess;
  base: string;
  pid: number;
}

/** A server as a child process (`node ARGS` in `cwd`), once `probe` answers. */
export async function start(args: string[], env: Record<string, string>, probe: string, cwd: string): Promise<Started> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 600; attempt++) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}`);
    try {
      const response = await fetch(`${base}${probe}`);
      await response.arrayBuffer();
      return { child, base, pid: child.pid as number };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`${args.join(' ')} did not start`);
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

const rssMb = (pid: number) => rssOf(pid) / (1024 * 1024);

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export interface Measured {
  name: string;
  /** Server CPU time per answered request: what the server costs, whatever else the shared machine runs. */
  cpuMsPerRequest: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  peakRssMb: number;
}

/**
 * `seconds` of load on `path(target)`, round-robin over the targets, or (a negative number) exactly that many
 * requests per target: the warm-up.
 */
export async function load(
  name: string,
  server: Started,
  targets: Target[],
  seconds: number,
  path: (target: Target) => string,
): Promise<Measured> {
  let next = 0;
  const cpuBefore = cpuSeconds(server.pid);
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(server.pid))), 250);
  const result = await autocannon({
    url: server.base,
    connections: CONNECTIONS,
    ...(seconds > 0 ? { duration: seconds } : { amount: -seconds * targets.length }),
    requests: [
      {
        method: 'GET',
        // Round-robin over the organizations: each stays far below its budget of 20 per second.
        setupRequest: (request) => {
          const target = targets[next++ % targets.length] as Target;
          return {
            ...request,
            path: path(target),
            headers: { authorization: `Bearer ${target.key}`, 'x-org': target.orgId },
          };
        },
      },
    ],
  });
  clearInterval(sampler);
  return {
    name,
    cpuMsPerRequest: ((cpuSeconds(server.pid) - cpuBefore) * 1000) / Math.max(1, result.requests.total),
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    peakRssMb: Math.max(peak, rssMb(server.pid)),
  };
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

/** Rounds of one server: mean throughput, median percentiles, CPU per request over all, peak RSS. */
export function combine(rounds: Measured[]): Measured {
  const requests = rounds.reduce((sum, m) => sum + m.rps, 0);
  return {
    name: (rounds[0] as Measured).name,
    rps: requests / rounds.length,
    p50: median(rounds.map((m) => m.p50)),
    p99: median(rounds.map((m) => m.p99)),
    cpuMsPerRequest: rounds.reduce((sum, m) => sum + m.cpuMsPerRequest * m.rps, 0) / requests,
    non2xx: rounds.reduce((sum, m) => sum + m.non2xx, 0),
    errors: rounds.reduce((sum, m) => sum + m.errors, 0),
    peakRssMb: Math.max(...rounds.map((m) => m.peakRssMb)),
  };
}
