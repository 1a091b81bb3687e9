// Three projects: pure unit tests once, and every database-backed test twice: on a real PostgreSQL server and on
// PGlite. Services that cannot be reached are announced loudly; with REQUIRE_SERVICES=1 (CI) they fail the run.
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

const postgresUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
// The Citus project (D316): the PostgreSQL API tests on a 3-node cluster (`../shared/citus`: build.sh, then
// cluster.sh start), each file's database made on every node. Skipped when the coordinator does not answer, unless
// REQUIRE_CITUS=1.
const citusUrl = process.env.TEST_CITUS_URL ?? 'postgres://postgres@127.0.0.1:5441/postgres';
const citusWorkers = process.env.TEST_CITUS_WORKERS ?? '127.0.0.1:5442,127.0.0.1:5443';

function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port), timeout: 1500 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

export default defineConfig(async () => {
  const [hasPostgres, hasRedis, hasCitus] = await Promise.all([
    reachable(postgresUrl),
    reachable(redisUrl),
    reachable(citusUrl),
  ]);
  if (!hasCitus && process.env.REQUIRE_CITUS === '1') throw new Error(`Citus coordinator unreachable at ${citusUrl}`);
  const missing = [!hasPostgres && `PostgreSQL at ${postgresUrl}`, !hasRedis && `Redis at ${redisUrl}`].filter(Boolean);
  if (missing.length > 0) {
    const banner = `\n${'!'.repeat(78)}\n  NOT REACHABLE: ${missing.join(' and ')}\n  ${
      process.env.REQUIRE_SERVICES === '1'
        ? 'REQUIRE_SERVICES=1: failing the run.'
        : 'Running what can run without them (PGlite, memory); those tests are SKIPPED.'
    }\n${'!'.repeat(78)}\n`;
    process.stderr.write(banner);
    if (process.env.REQUIRE_SERVICES === '1') throw new Error(`required services unreachable: ${missing.join(', ')}`);
  }
  const shared = {
    TEST_REDIS_URL: hasRedis ? redisUrl : '',
    TEST_POSTGRES_URL: hasPostgres ? postgresUrl : '',
  };
  const databaseTests = ['test/**/*.test.ts'];
  const unitTests = ['test/unit/**/*.test.ts', 'src/**/*.test.ts'];
  // The console's browser suite (decisions §17): Debian's Chromium against a real server on PostgreSQL + Redis.
  const browserTests = ['test/console/**/*.test.ts'];
  // `npm run test:quick` (TEST_QUICK=1): the inner loop — unit tests and the API on PGlite, without real child
  // processes (crashes, outages, the CLI as a process), the fuzzer or the browser. `npm test` stays the whole suite.
  const quick = process.env.TEST_QUICK === '1';
  const processTests = quick
    ? [
        'test/process/**',
        'test/cli/*process*.test.ts',
        'test/cli/contact-import-budget.test.ts',
        'test/fuzz/**',
        'test/api/http/openapi-generators.test.ts',
        'test/sdk/readme.test.ts',
      ]
    : [];
  const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  const hasChromium = existsSync(chromium);
  if (!hasChromium) {
    process.stderr.write(
      `\n  NOT FOUND: Chromium at ${chromium} (apt-get install -y chromium): the console's browser suite is SKIPPED\n`,
    );
    if (process.env.REQUIRE_SERVICES === '1') throw new Error(`Chromium missing at ${chromium}`);
  }
  return {
    test: {
      testTimeout: 60_000,
      hookTimeout: 60_000,
      // expect.poll waits for a state as long as a page's own waits do (10 s), not vitest's 1 s: a change answered
      // 429 is sent again after its Retry-After (D154), which alone takes a second.
      expect: { poll: { timeout: 10_000 } },
      // Much of a database-backed file's time is spent waiting (on PostgreSQL, child processes, a browser), so run as
      // many files at once as there are CPUs, at least two (Vitest's default leaves one CPU idle). Each file has its
      // own database (test/helpers/database.ts). TEST_WORKERS overrides.
      maxWorkers: Number(process.env.TEST_WORKERS ?? Math.max(2, availableParallelism())),
      projects: [
        { extends: true, test: { name: 'unit', include: unitTests, env: shared } },
        // The SDK's own tests (no database); its tests against a live server are under test/sdk.
        { extends: true, test: { name: 'sdk', include: ['sdk/test/**/*.test.ts'], env: shared } },
        ...(hasPostgres
          ? [
              {
                extends: true,
                test: {
                  name: 'postgres',
                  include: databaseTests,
                  exclude: [...unitTests, ...browserTests],
                  env: { ...shared, TEST_DB: 'postgres' },
                },
              },
            ]
          : []),
        ...(hasCitus
          ? [
              {
                extends: true,
                test: {
                  name: 'citus',
                  include: ['test/api/**/*.test.ts'],
                  // A file's database is made on three nodes and its migrations distribute every table, and each
                  // statement is a hop from the coordinator to a worker: a model test of 600 requests (teams'
                  // auto-assignment) or a test that starts a second harness takes twice its time on one PostgreSQL
                  // (D347).
                  testTimeout: 120_000,
                  hookTimeout: 120_000,
                  env: {
                    ...shared,
                    TEST_DB: 'postgres',
                    TEST_POSTGRES_URL: citusUrl,
                    TEST_CITUS_WORKERS: citusWorkers,
                  },
                },
              },
            ]
          : []),
        ...(hasPostgres && hasRedis && hasChromium
          ? [
              {
                extends: true,
                test: {
                  name: 'browser',
                  include: browserTests,
                  env: { ...shared, TEST_DB: 'postgres', CHROMIUM_PATH: chromium },
                },
              },
            ]
          : []),
        {
          extends: true,
          test: {
            name: 'pglite',
            include: databaseTests,
            exclude: [...unitTests, ...browserTests, ...processTests],
            env: { ...shared, TEST_DB: 'pglite' },
          },
        },
      ],
    },
  };
});
