// `npm run fuzz`: the long fuzzing run (the suite runs a short one). Every /v1 operation gets FUZZ_RUNS generated
// and mutated requests (default 500) on PGlite and, when reachable, on PostgreSQL (TEST_POSTGRES_URL, default
// postgres://postgres@127.0.0.1:5432/test). FUZZ_SEED replays a run; FUZZ_DB=pglite|postgres picks one database.
import { startHarness } from '../test/helpers/harness.ts';
import { fuzzOperations, prepareFuzz } from '../test/fuzz/openapi-fuzz.ts';

const runs = Number(process.env.FUZZ_RUNS ?? 500);
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
process.env.TEST_POSTGRES_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const kinds = process.env.FUZZ_DB ? [process.env.FUZZ_DB] : ['pglite', 'postgres'];

let failed = false;
for (const kind of kinds) {
  process.env.TEST_DB = kind;
  const started = Date.now();
  let h: Awaited<ReturnType<typeof startHarness>>;
  try {
    h = await startHarness({ unlimited: true });
  } catch (error) {
    process.stdout.write(`${kind}: skipped (${(error as Error).message})\n`);
    continue;
  }
  try {
    const setup = await prepareFuzz(h);
    const sent = await fuzzOperations(h, setup, runs, seed);
    const healthy = (await h.api('GET', '/healthz')).status === 200;
    process.stdout.write(
      `${kind}: ${sent} requests over ${setup.operations.length} operations in ${((Date.now() - started) / 1000).toFixed(1)} s, seed ${seed}, no 5xx, every error in the contract's shape; healthy afterwards: ${healthy}\n`,
    );
    if (!healthy) failed = true;
  } catch (error) {
    failed = true;
    process.stdout.write(`${kind}: FAILED with seed ${seed}\n${(error as Error).message}\n`);
  } finally {
    h.recorded.length = 0;
    await h.close();
  }
}
process.exit(failed ? 1 : 0);
