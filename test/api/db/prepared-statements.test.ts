// D22: the hottest read (a contact with its property values) is a named statement on PostgreSQL: parsed once
// per connection and run on a cached plan, still executed through Kysely (plugins and counts see it). D207: so are
// the workers' polls, which then run on generic plans (not planned at each poll). PGlite runs in-process and sends no
// statement names.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../../src/db/database.ts';
import { systemClock } from '../../../src/lib/clock.ts';
import { findContactWithValues } from '../../../src/modules/contacts/contacts.repo.ts';
import { createContactsService } from '../../../src/modules/contacts/contacts.service.ts';
import { createOperatorService } from '../../../src/modules/operator/operator.service.ts';
import { createTestDatabase, onCitus, type TestDatabase } from '../../helpers/database.ts';
import { startHarness } from '../../helpers/harness.ts';
import { phones, recipientsFor, sender } from '../../helpers/sends.ts';

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

// On Citus the coordinator plans a distributed statement by its own router, not by PostgreSQL's plan cache that this
// reads: one PostgreSQL's machinery, skipped there (D347).
describe.skipIf(process.env.TEST_DB !== 'postgres' || onCitus)("the workers' polls on PostgreSQL (D207)", () => {
  it('are prepared by name and, after five executions, run on generic plans', async () => {
    const db = (single as Database).db;
    await sql`deallocate all`.execute(db);
    const h = await startHarness({
      database: single as Database,
      unlimited: true,
      fanout: { batchSize: 8, groupSize: 4, concurrency: 4 },
    });
    try {
      const { key, template } = await sender(h, { balance: 1000 });
      const response = await h.api('POST', `/v1/templates/${template.id}/send`, {
        key,
        body: { recipients: recipientsFor(phones(64)) },
      });
      expect(response.status).toBe(202);
      expect(await h.fanout.drain()).toBe(64);
      for (let round = 0; round < 16; round++) await h.deliveries.drain();
      const { rows } = await sql<{ statement: string; generic: number; custom: number }>`select statement,
          generic_plans::int as generic, custom_plans::int as custom
        from pg_prepared_statements`.execute(db);
      const plans = (fragment: string) => {
        const named = rows.filter((row) => row.statement.replace(/\s+/g, ' ').includes(fragment));
        expect(named.length, fragment).toBeGreaterThan(0);
        return named.reduce((sum, row) => ({ generic: sum.generic + row.generic, custom: sum.custom + row.custom }), {
          generic: 0,
          custom: 0,
        });
      };
      // The webhook deliveries' poll, run at least once per drain (D342: which organizations have due deliveries; the
      // claim within one runs only where something is due): after the five custom plans PostgreSQL makes first, it
      // was not planned again.
      const { generic, custom } = plans('from organizations o where exists (select from webhook_deliveries');
      expect(generic + custom).toBeGreaterThanOrEqual(16);
      expect(generic).toBeGreaterThan(custom);
      // D209: a group's record statement (contacts, conversation messages, events, the next group's marks) and its
      // broadcast's end check go by name; D211: so do the recipients' lease and their move to `sent`, joined back by
      // their whole key, which only the primary key leads with. After their first five runs, on generic plans. (The
      // end check's lock runs only for a broadcast that looks ended, D359: once here.)
      for (const fragment of [
        'update contacts set',
        'select b.id from broadcasts b where',
        "update broadcast_recipients as r set status = 'sending'",
        'with u as (',
      ]) {
        expect(plans(fragment).generic, fragment).toBeGreaterThan(0);
      }
    } finally {
      await h.app.close();
    }
  });
});
