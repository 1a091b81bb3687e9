// `npm run bench`: every benchmark of issue 9 in turn, each in its own process, then one summary table of their
// headline rows beside the baselines measured in the same run (bench/summary.ts). BENCH_QUICK=1 is the quick mode
// (a few minutes); without it the contact list runs at 1,000,000 contacts. BENCH_SKIP="reads,import" skips some.
import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { readSummary, resetSummary, summaryFile, summaryTable } from './summary.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const BENCHES: { name: string; script: string; nodeArgs?: string[] }[] = [
  { name: 'reads', script: 'bench/reads.ts' },
  { name: 'contacts', script: 'bench/run.ts' },
  { name: 'sends', script: 'bench/sends.ts' },
  { name: 'broadcasts', script: 'bench/broadcasts.ts' },
  { name: 'webhooks', script: 'bench/webhooks.ts' },
  { name: 'webhook-lag', script: 'bench/webhook-lag.ts' },
  { name: 'import', script: 'bench/import.ts' },
  // API and worker in one process, started with bin/crm's Node flag (its small young generation), as the product's
  // processes run.
  { name: 'audience', script: 'bench/audience.ts', nodeArgs: ['--max-semi-space-size=2'] },
  { name: 'replies', script: 'bench/replies.ts' },
  { name: 'automation', script: 'bench/automation.ts' },
  { name: 'noisy', script: 'bench/noisy-neighbour.ts' },
  { name: 'first-start', script: 'bench/first-start.ts' },
];
const skip = new Set((process.env.BENCH_SKIP ?? '').split(',').filter(Boolean));

resetSummary();
const failed: string[] = [];
const started = Date.now();
for (const bench of BENCHES) {
  if (skip.has(bench.name)) continue;
  process.stderr.write(`\n== ${bench.name} (${bench.script}), load average ${loadavg()[0]?.toFixed(1)}\n`);
  const run = spawnSync(process.execPath, [...(bench.nodeArgs ?? []), bench.script], {
    cwd: root,
    stdio: 'inherit',
    env: process.env,
  });
  if (run.status !== 0) failed.push(`${bench.name} (exit ${run.status ?? run.signal})`);
}

const rows = readSummary();
process.stdout.write(
  `\n## Summary (${process.env.BENCH_QUICK === '1' ? 'quick' : 'full'} mode, ${cpus().length} CPUs, ` +
    `load average ${loadavg()
      .map((value) => value.toFixed(1))
      .join(' ')} at the end, ${Math.round((Date.now() - started) / 1000)} s)\n\n${summaryTable(rows)}\n\n` +
    `Rows also in ${summaryFile()}.\n`,
);
if (failed.length > 0) {
  process.stderr.write(`benchmarks that failed: ${failed.join(', ')}\n`);
  process.exitCode = 1;
}
