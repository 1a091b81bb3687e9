// Overload is not an outage (D129, D132): a busy pool answers 503 `service_busy` with Retry-After after a
// bounded wait, leaves the database marked reachable and /readyz green; an unreachable database still answers the
// fast 503 `service_unavailable` and fails /readyz; an organization over its concurrency limit is answered
// `service_busy` while another organization's requests go through.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/db/database.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { startTcpProxy } from '../../helpers/tcp-proxy.ts';
import { waitUntil } from '../../helpers/wait.ts';

const onPostgres = process.env.TEST_DB === 'postgres';
const POOL_SIZE = 2;

/** Holds `count` of the pool's connections (open transactions) until the returned function is called. */
async function holdConnections(h: Harness, count: number): Promise<() => Promise<void>> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let started = 0;
  const holders = Array.from({ length: count }, () =>
    h.database.db.transaction().execute(async () => {
      started++;
      await released;
    }),
  );
  await waitUntil(() => started === count, { message: `${count} connections held` });
  return async () => {
    release();
    await Promise.all(holders);
  };
}

describe('a busy pool', () => {
  let testDatabase: TestDatabase;
  let h: Harness;
  let key: string;
  let release: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    testDatabase = await createTestDatabase(undefined, { poolSize: POOL_SIZE, poolWaitMs: 300, poolQueue: 50 });
    h = await startHarness({ database: testDatabase.database, unlimited: true });
    ({ key } = await h.createOrg());
  });
  afterEach(async () => {
    await release?.();
    release = undefined;
  });
  afterAll(async () => {
    await h.close();
    await testDatabase.drop();
  });

  it('answers 503 service_busy with Retry-After, keeps the database reachable and /readyz green', async () => {
    const created = await h.api('POST', '/v1/contacts', { key, body: { first_name: 'Before' } });
    expect(created.status).toBe(201);

    // Every connection taken: one on the embedded database (one session), the whole pool on PostgreSQL.
    release = await holdConnections(h, onPostgres ? POOL_SIZE : 1);
    const startedAt = Date.now();
    const busy = await h.api('GET', `/v1/contacts/${created.body.id}`, { key });
    const waited = Date.now() - startedAt;
    expect(busy.status).toBe(503);
    expect(busy.body).toEqual({ detail: 'service_busy' });
    expect(busy.headers['retry-after']).toBe('1');
    // Bounded queueing: the request waited for a connection (the pool's wait), then gave up.
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(waited).toBeLessThan(5000);

    // Busy is not down: no fast 503 for everyone, and the process still says it is ready.
    expect(h.database.health.available).toBe(true);
    const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ status: 'ready', checks: { database: 'ok', migrations: 'ok' } });

    await release();
    release = undefined;
    const after = await h.api('GET', `/v1/contacts/${created.body.id}`, { key });
    expect(after.status).toBe(200);
  });

  it('refuses at once past the queue: a full queue is busy too', async () => {
    const small = await openDatabase(
      testDatabase.url
        ? { databaseUrl: testDatabase.url, poolSize: 1, poolWaitMs: 60_000, poolQueue: 0 }
        : { dataDir: 'memory://', poolWaitMs: 60_000, poolQueue: 0 },
    );
    try {
      let unblock!: () => void;
      const blocked = new Promise<void>((resolve) => {
        unblock = resolve;
      });
      let holding = false;
      const holder = small.db.connection().execute(async () => {
        holding = true;
        await blocked;
      });
      await waitUntil(() => holding, { message: 'the one connection held' });
      const startedAt = Date.now();
      await expect(small.db.selectNoFrom((eb) => eb.lit(1).as('one')).execute()).rejects.toMatchObject({
        name: 'BusyError',
        reason: 'queue_full',
      });
      // Not the minute of waiting the queue would allow: refused at once.
      expect(Date.now() - startedAt).toBeLessThan(1000);
      unblock();
      await holder;
      expect(await small.ping()).toBe(true);
    } finally {
      await small.close();
    }
  });
});

describe.skipIf(!onPostgres)('an unreachable database (PostgreSQL)', () => {
  it('answers the fast 503 service_unavailable and fails /readyz, then comes back', async () => {
    const testDatabase = await createTestDatabase('postgres');
    const target = new URL(testDatabase.url as string);
    const proxy = await startTcpProxy({ port: Number(target.port || 5432) });
    const database = await openDatabase({
      databaseUrl: proxy.url(testDatabase.url as string),
      poolSize: POOL_SIZE,
      poolWaitMs: 300,
    });
    const h = await startHarness({ database, unlimited: true });
    try {
      const { key } = await h.createOrg();
      proxy.refuse();
      proxy.cut();
      const down = await waitUntil(
        async () => {
          const answer = await h.api('GET', '/v1/contacts', { key });
          return answer.status === 503 && answer.body.detail === 'service_unavailable' ? answer : undefined;
        },
        { message: '503 service_unavailable' },
      );
      expect(down.headers['retry-after']).toBe('1');
      await waitUntil(() => !database.health.available, { message: 'the database marked unreachable' });
      // While it is marked down, every request gets the fast 503 without waiting on a connection.
      const startedAt = Date.now();
      const fast = await h.api('GET', '/v1/contacts', { key });
      expect(fast.body).toEqual({ detail: 'service_unavailable' });
      expect(Date.now() - startedAt).toBeLessThan(250);
      const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toMatchObject({ checks: { database: 'failing' } });

      proxy.restore();
      await waitUntil(() => database.health.available, { message: 'the database reachable again' });
      expect((await h.api('GET', '/v1/contacts', { key })).status).toBe(200);
    } finally {
      await h.close();
      await database.close();
      await proxy.close();
      await testDatabase.drop();
    }
  });
});

describe("an organization's bulkhead", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ unlimited: true, bulkhead: { limit: 1, queue: 0, waitMs: 1000 } });
  });
  afterAll(() => h.close());

  it('answers service_busy to the organization over its limit while another organization is served', async () => {
    const flooding = await h.createOrg();
    const quiet = await h.createOrg();
    const created = await h.api('POST', '/v1/contacts', { key: quiet.key, body: { first_name: 'Quiet' } });
    expect(created.status).toBe(201);

    const flood = Array.from({ length: 12 }, (_, index) =>
      index % 2 === 0
        ? h.api('GET', '/v1/contacts?q=flood', { key: flooding.key })
        : h.api('POST', '/v1/contacts/batch-upsert', {
            key: flooding.key,
            body: { match_on: 'phone', items: [{ first_name: `Flood ${index}`, phone: `+1555030${1000 + index}` }] },
          }),
    );
    // The quiet organization's reads by id (cheap: they take no place) and one search of its own, at once.
    const reads = [
      ...Array.from({ length: 3 }, () => h.api('GET', `/v1/contacts/${created.body.id}`, { key: quiet.key })),
      h.api('GET', '/v1/contacts?q=quiet', { key: quiet.key }),
    ];
    const [floodAnswers, readAnswers] = await Promise.all([Promise.all(flood), Promise.all(reads)]);

    // One place, no queue: requests of the flooding organization that overlap are refused at once.
    const busy = floodAnswers.filter((answer) => answer.status === 503);
    expect(busy.length).toBeGreaterThan(0);
    for (const answer of busy) {
      expect(answer.body).toEqual({ detail: 'service_busy' });
      expect(answer.headers['retry-after']).toBe('1');
    }
    for (const answer of floodAnswers.filter((answer) => answer.status !== 503)) expect(answer.status).toBe(200);
    // The other organization has places of its own.
    for (const answer of readAnswers) expect(answer.status).toBe(200);
    // Every place is given back, after its rest (D184: as long again as it was held, at the default share).
    await waitUntil(() => h.wiring.bulkhead.held(flooding.org.id) === 0, { message: 'the flood’s place back' });
    await waitUntil(() => h.wiring.bulkhead.held(quiet.org.id) === 0, { message: 'the quiet org’s place back' });
    expect((await h.api('GET', '/v1/contacts?q=flood', { key: flooding.key })).status).toBe(200);
  });
});
