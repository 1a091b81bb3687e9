// Issue 9: the hottest read (a contact with its property values) is a named statement on PostgreSQL: parsed once
// per connection and run on a cached plan, still executed through Kysely (plugins and counts see it). D207: so are
// the fan-out's statements, which then run on generic plans (not planned at each group). PGlite runs in-process and
// sends no statement names.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { findContactWithValues } from '../../src/modules/contacts/contacts.repo.ts';
import { createContactsService } from '../../src/modules/contacts/contacts.service.ts';
import { createOperatorService } from '../../src/modules/operator/operator.service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startHarness } from '../helpers/harness.ts';
import { phones, recipientsFor, sender } from '../helpers/sends.ts';

let test: TestDatabase;
let single: Database | undefined;
beforeAll(async () => {
  test = await createTestDatabase();
  // One connection: the session whose prepared statements the test reads is the one that ran the read.
  if (test.url) single = await openDatabase({ databaseUrl: test.url, poolSize: 1 });
});
afterAll(async () => {
  await single?.close();
  await test.drop();
});

describe.skipIf(process.env.TEST_DB !== 'postgres')('the contact read on PostgreSQL', () => {
  it('is prepared once per connection under its name and answers like an unnamed statement', async () => {
    const db = (single as Database).db;
    const org = await createOperatorService({ db, clock: systemClock, platform: 'sandbox' }).createOrganization({
      name: 'Prepared',
      plan: 'scale',
    });
    const contact = await createContactsService({ db, clock: systemClock }).create(org.id, { first_name: 'Ana' });
    const prepared = () =>
      sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(db);
    expect((await prepared()).rows).toEqual([]);

    // Executed more than the five custom plans PostgreSQL makes before it may switch to the cached generic plan.
    for (let round = 0; round < 8; round++) {
      const found = await findContactWithValues(db, org.id, contact.id);
      expect(found).toMatchObject({ id: contact.id, first_name: 'Ana', property_values: [] });
      expect(await findContactWithValues(db, org.id, 'ct_missing')).toBeUndefined();
      expect(await findContactWithValues(db, 'org_other', contact.id)).toBeUndefined();
    }
    const rows = (await prepared()).rows;
    expect(rows).toHaveLength(1);
    expect(rows[0]?.name).toMatch(/^crm_prepared_\d+$/);
    expect(rows[0]?.statement).toContain('contact_property_values');
  });
});

describe.skipIf(process.env.TEST_DB !== 'postgres')("the fan-out's statements on PostgreSQL (D207)", () => {
  it('are prepared by name and, after five executions, run on generic plans', async () => {
    const db = (single as Database).db;
    await sql`deallocate all`.execute(db);
    const h = await startHarness({
      database: single as Database,
      unlimited: true,
      fanout: { batchSize: 32, groupSize: 4, concurrency: 4 },
    });
    try {
      const { key, template } = await sender(h, { balance: 1000 });
      for (let round = 0; round < 2; round++) {
        const list = phones(48);
        const response = await h.api('POST', `/v1/templates/${template.id}/send`, {
          key,
          body: { recipients: recipientsFor(list) },
        });
        expect(response.status).toBe(202);
      }
      expect(await h.fanout.drain()).toBe(96);
      const { rows } = await sql<{ statement: string; generic: number; custom: number }>`select statement,
          generic_plans::int as generic, custom_plans::int as custom
        from pg_prepared_statements`.execute(db);
      const named = (fragment: string) => rows.filter((row) => row.statement.includes(fragment));
      // The claim's due rows and their lease, a group's record (with the next group's marks), the lock of the
      // broadcasts that may have ended and their check.
      for (const fragment of [
        'order by "r"."next_attempt_at"',
        "update broadcast_recipients as r set status = 'sending'",
        'update contacts set',
        'order by id for update',
        'update broadcasts b set finished_at = now()',
      ]) {
        expect(named(fragment).length, fragment).toBeGreaterThan(0);
      }
      // 24 groups of 4: the record statement ran far more than five times, and most runs were not planned again.
      const record = named('update contacts set');
      const generic = record.reduce((sum, row) => sum + row.generic, 0);
      const custom = record.reduce((sum, row) => sum + row.custom, 0);
      expect(generic + custom).toBeGreaterThanOrEqual(20);
      expect(generic).toBeGreaterThan(custom);
    } finally {
      await h.app.close();
    }
  });
});
