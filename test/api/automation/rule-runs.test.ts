// decisions §20: a rule's runs — newest first, paginated — and kept 30 days by the worker's retention task (D182's
// batches). Runs are seeded by SQL here; the engine's tests make real ones.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETENTION_DEFAULTS } from '../../../src/config.ts';
import { pruneHistory } from '../../../src/worker/retention.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

async function seedRuns(orgId: string, ruleId: string, tag: string, count: number, ageDays: number) {
  await sql`insert into automation_rule_runs (org_id, id, rule_id, conversation_id, message_id, actions, created_at)
    select ${orgId}, 'run_' || ${tag} || lpad(g::text, 3, '0'), ${ruleId}, 'conv_x', 'msg_' || g,
      '[{"type":"add_labels","outcome":"done"}]', now() - make_interval(days => ${ageDays}, secs => g)
    from generate_series(1, ${count}) g`.execute(h.database.db);
}

describe('rule runs', () => {
  it('lists newest first in pages, and the retention task removes those older than 30 days', async () => {
    const { org, key } = await h.createOrg();
    const rule = await h.api('POST', '/v1/automation-rules', {
      key,
      body: { name: 'Label', event: 'message.received', actions: [{ type: 'add_labels', labels: ['x'] }] },
    });
    await seedRuns(org.id, rule.body.id, 'old', 3, 31);
    await seedRuns(org.id, rule.body.id, 'new', 4, 1);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=3&cursor=${cursor}` : '?limit=3';
      const page = await h.api('GET', `/v1/automation-rules/${rule.body.id}/runs${query}`, { key });
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((run: { id: string }) => run.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    // Newer seconds-offset is older: g=1 is the newest of each group.
    expect(seen).toEqual([
      'run_new001',
      'run_new002',
      'run_new003',
      'run_new004',
      'run_old001',
      'run_old002',
      'run_old003',
    ]);
    const first = (await h.api('GET', `/v1/automation-rules/${rule.body.id}/runs?limit=1`, { key })).body.items[0];
    expect(first).toEqual({
      id: 'run_new001',
      conversation_id: 'conv_x',
      message_id: 'msg_1',
      actions: [{ type: 'add_labels', outcome: 'done' }],
      created_at: expect.any(String),
    });

    const removed = await pruneHistory(h.database.db, new Date(), { ...RETENTION_DEFAULTS, batch: 2 });
    expect(removed.ruleRuns).toBe(3);
    const left = await h.api('GET', `/v1/automation-rules/${rule.body.id}/runs`, { key });
    expect(left.body.items.map((run: { id: string }) => run.id)).toEqual([
      'run_new001',
      'run_new002',
      'run_new003',
      'run_new004',
    ]);
    // Deleting the rule deletes its runs.
    expect((await h.api('DELETE', `/v1/automation-rules/${rule.body.id}`, { key })).status).toBe(204);
    const count = await sql<{
      n: string;
    }>`select count(*) as n from automation_rule_runs where org_id = ${org.id}`.execute(h.database.db);
    expect(Number(count.rows[0]?.n)).toBe(0);
  });
});
