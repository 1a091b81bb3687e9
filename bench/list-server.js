// The API of `npm run bench:contacts` (bench/run.ts) in its own process, so that the bench reads the API's own RSS
// (decisions D194): the app of the one wiring on a pool of 20, without a rate limit (the bench measures the list,
// not the budget), as the bench ran it in its own process before. Plain JavaScript that loads the server through
// bin/aot.js: the compiled dist/ while current, as `crm serve` runs (no type stripper in the process).
//
// The budget's store stands in for Redis with a budget that never binds: it reports a shared access generation, so
// that the API keeps keys in memory as every process of a deployment with Redis does (decisions D20). A store
// without one made the API read the key from the database on every request, a round trip no such deployment makes.
//
// On SIGTERM it writes its garbage collector's pauses during the run to stderr (one line), so that a row's tails
// can be told apart from the collector's.
//
//   DATABASE_URL, PORT (the bench sets them)
//   BENCH_API_HEAP_SAMPLE  a path: sample every allocation (also those collected since) and write the sampling heap
//                          profile there on SIGTERM (open it in Chrome's DevTools, Memory tab)
import { writeFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { importEntry as load } from '../bin/aot.js';

const [{ buildApp }, { openDatabase }, { wire }] = await Promise.all([
  load('src/app.ts'),
  load('src/db/database.ts'),
  load('src/wiring.ts'),
]);

const KINDS = { 1: 'scavenges', 2: 'minor mark-sweeps', 4: 'mark-compacts', 8: 'incremental marking steps' };
const pauses = new Map();
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = KINDS[entry.detail?.kind] ?? 'other';
    const seen = pauses.get(kind) ?? { count: 0, total: 0, max: 0, over5: 0 };
    seen.count++;
    seen.total += entry.duration;
    seen.max = Math.max(seen.max, entry.duration);
    if (entry.duration > 5) seen.over5++;
    pauses.set(kind, seen);
  }
}).observe({ entryTypes: ['gc'] });

const heapSample = process.env.BENCH_API_HEAP_SAMPLE;
let session;
if (heapSample) {
  const inspector = await import('node:inspector/promises');
  session = new inspector.Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
}

const database = await openDatabase({ databaseUrl: process.env.DATABASE_URL, poolSize: 20 });
const unlimited = {
  hit: async () => 1,
  hitWithGeneration: async () => ({ count: 1, generation: 'bench' }),
  bumpGeneration: async () => {},
  sharedGeneration: true,
  close: async () => {},
};
const app = await buildApp(wire({ database, rateLimitStore: unlimited }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.once('SIGTERM', async () => {
  const parts = [...pauses].map(
    ([kind, s]) =>
      `${s.count} ${kind} (mean ${(s.total / s.count).toFixed(1)} ms, max ${s.max.toFixed(1)}, ${s.over5} over 5 ms)`,
  );
  process.stderr.write(`API garbage collection during the run: ${parts.join('; ') || 'none'}\n`);
  if (session) {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    writeFileSync(heapSample, JSON.stringify(profile));
    process.stderr.write(`sampling heap profile written to ${heapSample}\n`);
  }
  await app.close();
  await database.close();
  process.exit(0);
});
