// The subscription rule is the events module's (D334), and migrations install a frozen copy of it: a migrated
// database's `webhook_record_events` must be exactly the rule events/subscription-rule.ts writes, so a change there
// without a migration that installs it fails here.
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { installSubscriptionRule } from '../../../src/modules/events/subscription-rule.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.drop());

const ruleText = async () => {
  const { rows } = await sql<{ text: string }>`select pg_get_functiondef(
    'webhook_record_events(text, jsonb, timestamptz, text)'::regprocedure) as text`.execute(t.database.db);
  return rows[0]?.text ?? '';
};

it("a migrated database's subscription rule is the events module's", async () => {
  const migrated = await ruleText();
  expect(migrated).toContain('insert into webhook_deliveries');
  await installSubscriptionRule(t.database.db);
  expect(await ruleText()).toBe(migrated);
});

it('the comparison sees a different rule', async () => {
  await installSubscriptionRule(t.database.db, [['message.%', 'ping']]);
  const other = await ruleText();
  await installSubscriptionRule(t.database.db);
  expect(other).not.toBe(await ruleText());
});
