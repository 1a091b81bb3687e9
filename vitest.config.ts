// Three projects: pure unit tests once, and every database-backed test twice: on a real PostgreSQL server and on
// PGlite. Services that cannot be reached are announced loudly; with REQUIRE_SERVICES=1 (CI) they fail the run.
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

const postgresUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
// The Citus project (D316, D347): API tests on a 3-node cluster (`../shared/citus`: build.sh, then cluster.sh start),
// each file's database made on every node. Part of `npm test` when the coordinator answers; skipped when it does
// not, unless REQUIRE_CITUS=1 (CI).
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

/**
 * What `npm test` (and so CI) runs on the Citus cluster (D347): the files that meet what Citus does differently from
 * one PostgreSQL, not all of test/api (all of it takes about three times this subset's time, past CI's budget).
 * The rule: (1) where each table lives and the shape of every statement (`test/api/db`: placement, the tour of every
 * statement, prepared and read statements, deadlocks); (2) every route for two organizations (route isolation);
 * (3) each global lookup through the directory (keys, sessions and sign-in, the platform's ids on its webhooks);
 * (4) each worker's claim or cross-organization step (the fan-out and its end check, audiences, webhook deliveries,
 * reply hand-offs, snoozes, the assistant's jobs, retention) and the outbox of events it writes;
 * (5) the counters and walks kept by row triggers and versions (contact counts and walks, the 24-hour window);
 * (6) D352: the rest of the fan-out's files (`recipients/`), which failed on Citus before the claims went per
 * organization. Four more once-failing files (a broadcast's retry, the deliveries' connections, contact duplicates,
 * conversation state, account locks) were tried and took CI to 44.7 minutes of its 45: they run by hand (D353).
 * No file is cheap there: a file's database alone (made on three nodes, migrated, dropped) takes ≈ 17 s at load 14.
 * TEST_CITUS_ALL=1 runs every file of test/api there instead (all of it passes: docs/scaling.md).
 */
const citusTests =
  process.env.TEST_CITUS_ALL === '1'
    ? ['test/api/**/*.test.ts']
    : [
        'test/api/db/*.test.ts',
        'test/api/http/route-isolation.test.ts',
        'test/api/http/auth.test.ts',
        'test/api/sessions/console-sessions.test.ts',
        'test/api/messaging/inbound.test.ts',
        'test/api/broadcasts/sends.test.ts',
        'test/api/broadcasts/audience-broadcasts.test.ts',
        'test/api/recipients/*.test.ts',
        'test/api/webhook-endpoints/webhook-deliveries.test.ts',
        'test/api/webhook-endpoints/webhook-delivery-groups.test.ts',
        'test/api/conversations/replies-delivery.test.ts',
        'test/api/conversations/conversation-workflow.test.ts',
        'test/api/automation/assistant-engine.test.ts',
        'test/api/worker/retention.test.ts',
        'test/api/events/webhook-events.test.ts',
        'test/api/contacts/contact-counts.test.ts',
        'test/api/contacts/contact-walk.test.ts',
        'test/api/messaging-accounts/messaging-window.test.ts',
      ];

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
      // D357: the PGlite test databases start from a pre-migrated copy, built here once per change of the migrations.
      globalSetup: ['test/helpers/pglite-test-image.ts'],
      // D357: the quick loop runs a worker's files in one module graph (no fresh process per file): the app's modules
      // are loaded once per worker, not per file (403 → 198 s here). Each file still has its own database and
      // harness. In `npm test` the pglite project does the same, and the postgres project, the same files, keeps a
      // process per file: a file that leans on what an earlier one left in a module is caught there.
      isolate: !quick,
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
                  include: citusTests,
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
            isolate: false,
            exclude: [...unitTests, ...browserTests, ...processTests],
            env: { ...shared, TEST_DB: 'pglite' },
          },
        },
      ],
    },
  };
});
