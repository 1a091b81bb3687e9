// Retention (D182): the worker's retention task removes finished webhook history, the platform's
// old webhook ids and expired idempotency keys in bounded batches, works off a backlog larger than a batch, leaves a
// remainder to the next run when its time budget is spent, and honours the retention settings. Pending deliveries,
// recent rows, broadcasts' recipients and conversations' messages are kept.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, RETENTION_DEFAULTS } from '../../../src/config.ts';
import { pruneHistory } from '../../../src/worker/retention.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(async () => {
  await h.close();
});

const DAY_MS = 24 * 60 * 60 * 1000;

/** Seeds `count` rows of each kind, `ageDays` old, for one organization and one endpoint (SQL, as the bench does). */
async function seed(orgId: string, endpointId: string, tag: string, count: number, ageDays: number) {
  const at = sql`now() - make_interval(days => ${ageDays})`;
  await sql`insert into webhook_events (org_id, id, type, payload, created_at)
    select ${orgId}, 'evt_' || ${tag} || g, 'contact.updated', '{}', ${at} from generate_series(1, ${count}) g`.execute(
    h.database.db,
  );
  await sql`insert into webhook_deliveries (org_id, id, endpoint_id, event_id, event_type, status, next_attempt_at,
      created_at, updated_at)
    select ${orgId}, 'whd_' || ${tag} || g, ${endpointId}, 'evt_' || ${tag} || g, 'contact.updated',
      case when g % 2 = 0 then 'succeeded' else 'failed' end, ${at}, ${at}, ${at}
    from generate_series(1, ${count}) g`.execute(h.database.db);
  await sql`insert into processed_webhook_events (org_id, event_key, kind, received_at)
    select ${orgId}, ${tag} || g, 'status', ${at} from generate_series(1, ${count}) g`.execute(h.database.db);
  await sql`insert into idempotency_keys (org_id, key, request_hash, created_at)
    select ${orgId}, ${tag} || g, 'hash', ${at}
    from generate_series(1, ${count}) g`.execute(h.database.db);
}

async function counts(orgId: string) {
  const count = async (
    table: 'webhook_events' | 'webhook_deliveries' | 'processed_webhook_events' | 'idempotency_keys',
  ) =>
    Number(
      (
        await h.database.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('org_id', '=', orgId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    events: await count('webhook_events'),
    deliveries: await count('webhook_deliveries'),
    platformEvents: await count('processed_webhook_events'),
    idempotencyKeys: await count('idempotency_keys'),
  };
}

async function organization() {
  const { key, org } = await h.createOrg();
  const created = await h.api('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: 'http://127.0.0.1:9/crm', events: ['*'] },
  });
  expect(created.status).toBe(201);
  return { orgId: org.id as string, endpointId: created.body.id as string };
}

describe('the retention task', () => {
  it('works off a backlog larger than a batch in one run and keeps recent rows and pending deliveries', async () => {
    const { orgId, endpointId } = await organization();
    await seed(orgId, endpointId, 'old', 250, 40); // past every retention
    await seed(orgId, endpointId, 'new', 10, 0); // recent
    // An old delivery still pending (an endpoint that was down for weeks) keeps itself and its event.
    await sql`update webhook_deliveries set status = 'pending' where org_id = ${orgId} and id = 'whd_old1'`.execute(
      h.database.db,
    );
    const removed = await pruneHistory(h.database.db, new Date(), { ...RETENTION_DEFAULTS, batch: 100 });
    expect(removed).toEqual({
      webhookDeliveries: 249,
      webhookEvents: 249,
      platformEvents: 250,
      idempotencyKeys: 250,
      ruleRuns: 0,
      files: 0,
    });
    expect(await counts(orgId)).toEqual({ events: 11, deliveries: 11, platformEvents: 10, idempotencyKeys: 10 });
    const kept = await h.database.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'status'])
      .where('org_id', '=', orgId)
      .where('id', '=', 'whd_old1')
      .execute();
    expect(kept).toEqual([{ id: 'whd_old1', status: 'pending' }]);
    // A second run finds nothing more.
    expect(await pruneHistory(h.database.db, new Date(), { ...RETENTION_DEFAULTS, batch: 100 })).toEqual({
      webhookDeliveries: 0,
      webhookEvents: 0,
      platformEvents: 0,
      idempotencyKeys: 0,
      ruleRuns: 0,
      files: 0,
    });
  });

  it('stops at its time budget after one batch of each kind and goes on at the next run', async () => {
    const { orgId, endpointId } = await organization();
    await seed(orgId, endpointId, 'old', 250, 40);
    const settings = { ...RETENTION_DEFAULTS, batch: 100, budgetMs: 0 };
    expect(await pruneHistory(h.database.db, new Date(), settings)).toEqual({
      webhookDeliveries: 100,
      webhookEvents: 100, // the events of the deliveries just removed (each statement commits on its own)
      platformEvents: 100,
      idempotencyKeys: 100,
      ruleRuns: 0,
      files: 0,
    });
    expect(await counts(orgId)).toMatchObject({ deliveries: 150, platformEvents: 150, idempotencyKeys: 150 });
    for (let run = 0; run < 5; run++) await pruneHistory(h.database.db, new Date(), settings);
    expect(await counts(orgId)).toEqual({ events: 0, deliveries: 0, platformEvents: 0, idempotencyKeys: 0 });
  });

  it('keeps what the retention settings keep', async () => {
    const { orgId, endpointId } = await organization();
    await seed(orgId, endpointId, 'eleven', 5, 11);
    await seed(orgId, endpointId, 'nine', 7, 9);
    const settings = { ...RETENTION_DEFAULTS, webhookHistoryMs: 10 * DAY_MS, platformEventsMs: 10 * DAY_MS };
    expect(await pruneHistory(h.database.db, new Date(), settings)).toMatchObject({
      webhookDeliveries: 5,
      webhookEvents: 5,
      platformEvents: 5,
    });
    expect(await counts(orgId)).toMatchObject({ events: 7, deliveries: 7, platformEvents: 7 });
    // With the defaults (30 and 14 days) nothing of either is old enough.
    await seed(orgId, endpointId, 'twenty', 3, 20);
    expect(await pruneHistory(h.database.db, new Date(), RETENTION_DEFAULTS)).toMatchObject({
      webhookDeliveries: 0,
      platformEvents: 3,
    });
  });
});

describe('retention settings', () => {
  it('reads WEBHOOK_RETENTION_DAYS and PLATFORM_EVENT_RETENTION_DAYS as whole days, at least one', () => {
    expect(loadConfig({}).retention).toEqual({
      webhookHistoryMs: RETENTION_DEFAULTS.webhookHistoryMs,
      platformEventsMs: RETENTION_DEFAULTS.platformEventsMs,
    });
    expect(loadConfig({ WEBHOOK_RETENTION_DAYS: '90', PLATFORM_EVENT_RETENTION_DAYS: '7' }).retention).toEqual({
      webhookHistoryMs: 90 * DAY_MS,
      platformEventsMs: 7 * DAY_MS,
    });
    expect(() => loadConfig({ WEBHOOK_RETENTION_DAYS: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ PLATFORM_EVENT_RETENTION_DAYS: '1.5' })).toThrow(/PLATFORM_EVENT_RETENTION_DAYS/);
  });
});
