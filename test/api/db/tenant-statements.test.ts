// docs/scaling.md: every statement the service runs on a tenant table constrains `org_id`, so that
// on Citus it routes to one organization's shard. A broad tour of the product through HTTP (and the worker steps it
// causes) runs with a Kysely plugin on the app's own database handle that compiles and records every statement; each
// statement naming a tenant table must compare or join on `org_id`, unless it is one of the global statements listed
// below BY DESIGN (each with its reason). An allowlisted pattern that the tour no longer runs fails the test too.
import { type KyselyPlugin, PostgresQueryCompiler } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETENTION_DEFAULTS } from '../../../src/config.ts';
import { pruneHistory } from '../../../src/worker/retention.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { NAMED_BODY, phones, recipientsFor, sender } from '../../helpers/sends.ts';

// The tenant tables of docs/scaling.md ("Distributed by org_id, co-located").
const TENANT_TABLES = [
  'contacts',
  'contact_property_values',
  'contact_sort_versions',
  'contact_counts',
  'contact_versions',
  'crm_properties',
  'funnel_stages',
  'sub_origins',
  'api_keys',
  'messaging_accounts',
  'channels',
  'channel_send_windows',
  'templates',
  'broadcasts',
  'broadcast_recipients',
  'messaging_windows',
  'messaging_window_phones',
  'messaging_window_recounts',
  'conversations',
  'messages',
  'reply_handoffs',
  'idempotency_keys',
  'processed_webhook_events',
  'webhook_endpoints',
  'webhook_events',
  'webhook_deliveries',
  'users',
  'user_sessions',
  'user_sign_in_links',
  'console_streams',
  // decisions §20
  'business_hours',
  'automation_rules',
  'automation_rule_runs',
  'ai_assistants',
  'conversation_automation',
  'assistant_jobs',
  'teams',
  'team_members',
  'canned_responses',
];

const statements: string[] = [];
const compiler = new PostgresQueryCompiler();
const recorder: KyselyPlugin = {
  transformQuery: (args) => {
    statements.push(compiler.compileQuery(args.node, args.queryId).sql);
    return args.node;
  },
  transformResult: async (args) => args.result,
};

/** The tenant tables a statement reads or writes (after from / join / update / into / using, quoted or not). */
function tenantTablesOf(statement: string): string[] {
  const named = new Set<string>();
  for (const match of statement.matchAll(/\b(?:from|join|update|into|using)\s+(?:"?public"?\.)?"?([a-z_]+)"?/gi)) {
    const table = (match[1] as string).toLowerCase();
    if (TENANT_TABLES.includes(table)) named.add(table);
  }
  return [...named];
}

/**
 * Whether a statement constrains org_id: a comparison or IN on it (either side, qualified or not), or a list that
 * leads with it (an insert's columns, a conflict target, a row comparison `(org_id, id) in (...)`).
 */
function constrainsOrg(statement: string): boolean {
  if (/^\s*insert into [^(]+\([^)]*"?org_id"?[,)]/i.test(statement)) return true;
  return /"?org_id"?\s*(=|in\b)|=\s*(?:"?[a-z_]+"?\.)?"?org_id"?|\(\s*(?:"?[a-z_]+"?\.)?"?org_id"?/i.test(statement);
}

// Global BY DESIGN (docs/scaling.md "Global lookups" and "The queues per shard"): each pattern with its reason.
const ALLOWED: { pattern: RegExp; reason: string }[] = [
  {
    pattern: /^select "org_id" from "messaging_accounts" where "id" = \$1$/,
    reason:
      'operator routes /admin/v1/messaging-accounts/{id} (admin token, no organization in the URL) name an account by ' +
      'its global id: this finds only its organization (the routing key; on Citus a routing table or the ' +
      'organization in the URL), every later read and write is constrained by org_id',
  },
  {
    pattern:
      /^select "?org_id"? from "?(conversations|assistant_jobs|reply_handoffs|broadcasts|broadcast_recipients)"?\s.*group by "?org_id"? order by min\(/is,
    reason:
      'D318: a worker finds the organizations with due work (a read without locks, grouped by organization, every ' +
      'shard on Citus), then claims within each by a statement that names it',
  },
  {
    pattern: /^select "org_id" from "templates" where "id" = \$1$/,
    reason:
      'sandbox operator control /admin/v1/sandbox/templates/{id}/review (admin token, no organization in the URL) ' +
      'names a template by its global id: this finds only its organization, the identity is then read by org_id',
  },
];

let test: TestDatabase;
let h: Harness;
beforeAll(async () => {
  test = await createTestDatabase();
  h = await startHarness({
    database: { ...test.database, db: test.database.db.withPlugin(recorder) },
    unlimited: true,
    audienceChunk: 3,
  });
});
afterAll(async () => {
  await h?.close();
  await test?.drop();
});

async function ok<T extends { status: number; text: string }>(response: T, below = 300): Promise<T> {
  expect(response.status, response.text).toBeLessThan(below);
  return response;
}

describe('the statements of a tour of the product', () => {
  it('each constrains org_id on every tenant table it names, but the allowlisted global ones', async () => {
    const { org, key, account, template } = await sender(h, { components: NAMED_BODY });
    await ok(await h.api('POST', '/v1/properties', { key, body: { key: 'tier', label: 'Tier', kind: 'TEXT' } }));
    const stage = await ok(await h.api('POST', '/v1/funnel-stages', { key, body: { name: 'Lead' } }));
    await ok(await h.api('GET', `/v1/funnel-stages/${stage.body.id}`, { key }));
    const endpoint = await ok(
      await h.api('POST', '/v1/webhook-endpoints', { key, body: { url: 'http://127.0.0.1:9/hook', events: ['*'] } }),
    );
    const list = phones(6);
    const made = [];
    for (const [index, phone] of list.slice(0, 3).entries()) {
      made.push(
        await ok(
          await h.api('POST', '/v1/contacts', {
            key,
            body: {
              first_name: `P${index}`,
              phone,
              country: 'MX',
              properties: { tier: { kind: 'TEXT', value_text: 'gold' } },
            },
          }),
        ),
      );
    }
    await ok(
      await h.api('POST', '/v1/contacts/batch-upsert', {
        key,
        body: {
          match_on: 'phone',
          items: list.slice(2).map((phone, index) => ({ phone, first_name: `B${index}`, country: 'MX' })),
        },
      }),
    );
    await ok(await h.api('PATCH', `/v1/contacts/${made[0]?.body.id}`, { key, body: { last_name: 'Z' } }));
    await ok(await h.api('GET', `/v1/contacts/${made[0]?.body.id}`, { key }));
    await ok(await h.api('GET', '/v1/contacts?limit=2', { key }));
    await ok(await h.api('GET', '/v1/contacts?q=P1', { key }));
    await ok(await h.api('GET', '/v1/contacts?property_filter=tier:eq:gold&sort=name', { key }));
    await ok(await h.api('GET', '/v1/properties', { key }));
    await ok(await h.api('GET', '/v1/templates', { key }));
    const send = await ok(
      await h.api('POST', `/v1/templates/${template.id}/send`, {
        key,
        headers: { 'idempotency-key': `tour-${Date.now()}` },
        body: {
          recipients: recipientsFor(list.slice(0, 2), { 'body.first_name': 'Ana', 'body.order_id': 'A-1' }),
        },
      }),
    );
    await h.fanout.drain();
    await ok(await h.api('GET', `/v1/broadcasts/${send.body.id}`, { key }));
    await ok(await h.api('GET', `/v1/broadcasts/${send.body.id}/recipients`, { key }));
    await ok(
      await h.api('POST', '/v1/broadcasts', {
        key,
        body: { template_id: template.id, audience: { country: ['MX'] }, variables: { 'body.order_id': 'A-7' } },
      }),
    );
    await h.audiences.drain();
    await h.fanout.drain();
    await ok(await h.api('GET', '/v1/broadcasts', { key }));
    await ok(
      await h.admin('POST', '/sandbox/inbound', { channel_id: account.numbers[0].id, from: list[0], text: 'hello' }),
    );
    const conversations = await ok(await h.api('GET', '/v1/conversations', { key }));
    const conversation = conversations.body.items.find((item: { last_inbound_at: unknown }) => item.last_inbound_at)
      .id as string;
    await ok(await h.api('GET', `/v1/conversations/${conversation}/messages`, { key }));
    await ok(
      await h.api('POST', `/v1/conversations/${conversation}/messages`, { key, body: { type: 'text', text: 'hi' } }),
    );
    await h.fanout.drain();
    await ok(await h.api('POST', `/v1/conversations/${conversation}/read`, { key }));
    // decisions §19: a team that auto-assigns, its member's availability, a note, a snooze that ends, canned responses.
    const person = await ok(
      await h.admin('POST', `/organizations/${org.id}/users`, {
        email: `tour-${Date.now()}@example.com`,
        role: 'agent',
      }),
    );
    const team = await ok(
      await h.api('POST', '/v1/teams', {
        key,
        body: { name: 'Tour', member_ids: [person.body.id], auto_assign: true },
      }),
    );
    await ok(
      await h.api('PATCH', `/v1/conversations/${conversation}`, {
        key,
        body: { team_id: team.body.id, labels: ['tour'] },
      }),
    );
    await ok(
      await h.api('POST', `/v1/conversations/${conversation}/notes`, {
        key,
        body: { text: 'tour', mention_ids: [person.body.id] },
      }),
    );
    await ok(await h.api('GET', `/v1/conversations?assignee=${person.body.id}&label=tour&sort=waiting_since`, { key }));
    const later = new Date(Date.now() + 60_000).toISOString();
    await ok(
      await h.api('PATCH', `/v1/conversations/${conversation}`, {
        key,
        body: { status: 'snoozed', snoozed_until: later },
      }),
    );
    await h.wiring.changes.endSnoozes(h.database.db, new Date(Date.now() + 120_000));
    await ok(await h.api('PATCH', `/v1/teams/${team.body.id}`, { key, body: { max_open_per_member: 2 } }));
    await ok(await h.api('GET', '/v1/users', { key }));
    await ok(await h.api('POST', '/v1/canned-responses', { key, body: { short_code: 'tour', text: 'Tour' } }));
    await ok(await h.api('GET', '/v1/canned-responses?q=to', { key }));
    await ok(await h.api('DELETE', `/v1/teams/${team.body.id}`, { key }));
    await h.deliveries.drain();
    await ok(await h.api('GET', `/v1/webhook-endpoints/${endpoint.body.id}/deliveries`, { key }));
    await ok(await h.api('GET', '/v1/me', { key }));
    // decisions §20: business hours, a rule, the assistant, and a contact's message running them (rules, away
    // message, the assistant's job), the job answered, the rule's runs.
    await ok(
      await h.api('PUT', '/v1/business-hours', {
        key,
        body: { enabled: true, week: [], away_message: { text: 'Closed' } },
      }),
    );
    await ok(await h.api('PUT', '/v1/ai-assistant', { key, body: { enabled: true, mode: 'autonomous' } }));
    const automationRule = await ok(
      await h.api('POST', '/v1/automation-rules', {
        key,
        body: { name: 'tour', event: 'message.received', actions: [{ type: 'add_labels', labels: ['tour'] }] },
      }),
    );
    await ok(
      await h.admin('POST', '/sandbox/inbound', {
        channel_id: account.numbers[0].id,
        from: phones(1)[0],
        text: 'opening hours?',
      }),
    );
    while ((await h.wiring.assistantJobs.runOnce()) > 0) {}
    await ok(await h.api('GET', `/v1/automation-rules/${automationRule.body.id}/runs`, { key }));
    await ok(await h.api('POST', '/v1/ai-assistant/test', { key, body: { text: 'hello' } }));
    // D182: the worker's retention, whose deletes join their batch back by (org_id, id).
    await pruneHistory(h.database.db, new Date(), RETENTION_DEFAULTS);
    // The operator's routes by an account's global id: one routing lookup, then reads and writes by org_id.
    await ok(await h.admin('PATCH', `/messaging-accounts/${account.id}`, { display_name: 'Tour' }));

    const seen = new Set<number>();
    const offending = new Set<string>();
    let checked = 0;
    for (const statement of statements) {
      if (tenantTablesOf(statement).length === 0) continue;
      checked++;
      const allowed = ALLOWED.findIndex((entry) => entry.pattern.test(statement));
      if (allowed >= 0) {
        seen.add(allowed);
        continue;
      }
      if (!constrainsOrg(statement)) offending.add(statement);
    }
    console.info(`tenant-statements: ${statements.length} statements, ${checked} on tenant tables`);
    expect([...offending]).toEqual([]);
    expect(ALLOWED.filter((_, index) => !seen.has(index)).map((entry) => entry.reason)).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });
});
