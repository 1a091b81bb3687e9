// `npm run bench:first-start`: a fresh clone → `npm install` → `npm start` → the README's first
// request answered. Clones this checkout's HEAD (commit first) into a temporary directory, runs the README's two
// commands as a newcomer would, and times each step of the install (from npm's own script banners) and of the start
// (to the banner with the demo key, then `GET /v1/me` with that key answering 200).
//
// npm's cache on this machine is warm (packages are not downloaded): the figure is the install's own work.
//
//   BENCH_FIRST_START_SOURCE  what to clone (default this checkout; another path or URL for a before/after)
//   BENCH_FIRST_START_PORT    the port `npm start` listens on (default 18180; the README's 8080 may be taken)
//   BENCH_KEEP=1              keep the clone (its path is printed)
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { recordSummary } from './summary.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const source = process.env.BENCH_FIRST_START_SOURCE ?? root;
const port = Number(process.env.BENCH_FIRST_START_PORT ?? 18180);
const TARGET_S = 30;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

const log = (line: string) => process.stdout.write(`${line}\n`);
const seconds = (ms: number) => (ms / 1000).toFixed(1);

/** Runs `npm args` in `cwd`, timing the lines that announce each lifecycle script (`> pkg@1.0.0 prepare`). */
function timed(
  cwd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ ms: number; steps: [string, number][] }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const steps: [string, number][] = [];
    const child = spawn(npm, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) {
        const script = /^> (\S+ \S+)$/.exec(line.trim());
        if (script?.[1]) steps.push([script[1], performance.now() - started]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve({ ms: performance.now() - started, steps }) : reject(new Error(`npm ${args[0]}: ${code}`)),
    );
  });
}

async function firstStart(cwd: string): Promise<{ bannerMs: number; readMs: number; child: ChildProcess }> {
  const started = performance.now();
  const child = spawn(npm, ['start'], {
    cwd,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  let output = '';
  const key = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no demo key after 120 s:\n${output}`)), 120_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const found = /oak_[A-Za-z0-9_-]+/.exec(output);
      if (found && output.includes('/docs')) {
        clearTimeout(timer);
        resolve(found[0]);
      }
    });
    child.on('exit', (code) => reject(new Error(`npm start exited (${code}):\n${output}`)));
  });
  const bannerMs = performance.now() - started;
  const response = await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
  if (response.status !== 200) throw new Error(`GET /v1/me with the demo key: ${response.status}`);
  return { bannerMs, readMs: performance.now() - started, child };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'crm-first-start-'));
  const clone = join(dir, 'crm');
  log(
    `load average at start: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const cloneStarted = performance.now();
  const cloned = spawnSync('git', ['clone', '-q', source, clone], { stdio: 'inherit' });
  if (cloned.status !== 0) throw new Error('git clone failed');
  const cloneMs = performance.now() - cloneStarted;
  const head = spawnSync('git', ['-C', clone, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).stdout.trim();
  log(`cloned ${source} (${head}) in ${seconds(cloneMs)} s`);
  // The README's two commands, nothing else; npm's own environment variables of this run are left out.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));
  let child: ChildProcess | undefined;
  try {
    const install = await timed(clone, ['install'], env);
    log(`npm install: ${seconds(install.ms)} s`);
    for (const [step, at] of install.steps) log(`  ${seconds(at).padStart(6)} s  ${step}`);
    const start = await firstStart(clone);
    child = start.child;
    log(
      `npm start: demo key printed after ${seconds(start.bannerMs)} s, GET /v1/me 200 after ${seconds(start.readMs)} s`,
    );
    const total = install.ms + start.readMs;
    log(`fresh clone → npm install && npm start → first request: ${seconds(total)} s (target <= ${TARGET_S} s)`);
    log(
      `load average at the end: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    recordSummary([
      {
        path: 'fresh clone → npm install && npm start → first request',
        row: `install ${seconds(install.ms)} s + start ${seconds(start.readMs)} s (npm cache warm)`,
        baseline: '—',
        value: `${seconds(total)} s`,
        ratio: null,
        p50Ms: null,
        p99Ms: null,
        rssMb: null,
        target: `<= ${TARGET_S} s`,
        met: total / 1000 <= TARGET_S,
      },
    ]);
  } finally {
    if (child?.pid) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {}
    }
    if (process.env.BENCH_KEEP === '1') log(`kept ${clone}`);
    else setTimeout(() => rmSync(dir, { recursive: true, force: true }), 2000);
  }
}

await main();
