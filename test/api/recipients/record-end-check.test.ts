// D213: the record step of a group checks its broadcast's end (under the broadcast's lock) only when the group it
// marks next holds no row of that broadcast. Such rows are `sending` until a later transaction moves them (the
// record of that group, a status report, the reconciler's `handoff_unconfirmed`), and that transaction checks the
// end: `broadcast.finished` still comes exactly once, also when the worker dies between the two groups.
// The lock part runs on PostgreSQL only (PGlite has one connection: nothing can hold a lock beside the test).
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { broadcastMoves } from '../../../src/modules/broadcasts/broadcasts.repo.ts';
import type { ClaimedRow } from '../../../src/modules/recipients/claim-charge.ts';
import { claimRecipients } from '../../../src/modules/recipients/recipient-claim.ts';
import {
  finishEndedBroadcasts,
  organizationsWithOpenBroadcasts,
} from '../../../src/modules/recipients/recipient-events.ts';
import { recordOutcomes, startHandoffs } from '../../../src/modules/recipients/recipient-handoffs.ts';
import { failUnconfirmed } from '../../../src/modules/recipients/recipients.repo.ts';
import {
  controlClient,
  testDatabaseKind,
  untilASessionWaitsForALock,
  withoutWaitingForALock,
} from '../../helpers/database.ts';
import { recordedEvents } from '../../helpers/events.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { phones, recipientsFor, sender } from '../../helpers/sends.ts';

const postgres = testDatabaseKind() === 'postgres';
let h: Harness;
let control: pg.Client | undefined;

beforeAll(async () => {
  h = await startHarness({ unlimited: true });
  if (postgres) control = await controlClient(h.database);
});
afterAll(async () => {
  await control?.end();
  await h.close();
});

/** A broadcast of four recipients, claimed (leased) and split into two groups of two; the first one marked. */
async function claimedInTwoGroups() {
  const { org, key, template } = await sender(h, { balance: 100 });
  // An endpoint for every event, so that events are recorded (never delivered here: the deliverer does not run).
  const endpoint = await h.api('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: 'http://127.0.0.1:9/hook', events: ['*'] },
  });
  expect(endpoint.status).toBe(201);
  const sent = await h.api('POST', `/v1/templates/${template.id}/send`, {
    key,
    body: { recipients: recipientsFor(phones(4)) },
  });
  expect(sent.status).toBe(202);
  const broadcastId = (sent.body as { id: string }).id;
  const claimed = await claimRecipients(h.database.db, {
    moves: broadcastMoves,
    limit: 10,
    leaseMs: 60_000,
    token: `end-check-${broadcastId}`,
    perNumberPerSecond: null,
  });
  const ours = claimed.filter((row) => row.broadcast_id === broadcastId).sort((a, b) => a.position - b.position);
  expect(ours).toHaveLength(4);
  const first = ours.slice(0, 2);
  const second = ours.slice(2);
  expect(await startHandoffs(h.database.db, first)).toHaveLength(2);
  return { orgId: org.id as string, broadcastId, first, second };
}

const accepted = (rows: ClaimedRow[]) =>
  rows.map((row) => ({
    row,
    verdict: { kind: 'accepted' as const, platformMessageId: `wamid.end-check-${row.broadcast_id}-${row.position}` },
  }));

async function finishedEvents(orgId: string, broadcastId: string): Promise<number> {
  const finished = await recordedEvents(h, orgId, 'broadcast.finished');
  return finished.filter((broadcast: { id: string }) => broadcast.id === broadcastId).length;
}

async function finishedAt(orgId: string, broadcastId: string) {
  const row = await h.database.db
    .selectFrom('broadcasts')
    .select('finished_at')
    .where('org_id', '=', orgId)
    .where('id', '=', broadcastId)
    .executeTakeFirstOrThrow();
  return row.finished_at;
}

describe("a group's record and its broadcast's end (D213)", () => {
  it('finishes the broadcast once, with the record of its last group', async () => {
    const { orgId, broadcastId, first, second } = await claimedInTwoGroups();
    expect(await recordOutcomes(h.database.db, broadcastMoves, accepted(first), second)).toHaveLength(2);
    expect(await finishedAt(orgId, broadcastId)).toBeNull();
    expect(await recordOutcomes(h.database.db, broadcastMoves, accepted(second))).toEqual([]);
    expect(await finishedAt(orgId, broadcastId)).not.toBeNull();
    expect(await finishedEvents(orgId, broadcastId)).toBe(1);
  });

  it('finishes it once when the worker dies between the groups: the reconciler fails the marked group and checks', async () => {
    const { orgId, broadcastId, first, second } = await claimedInTwoGroups();
    // The first group recorded, the second marked in the same transaction; the worker then dies before handing the
    // second group off (nothing else happens to those rows).
    expect(await recordOutcomes(h.database.db, broadcastMoves, accepted(first), second)).toHaveLength(2);
    expect(await finishedAt(orgId, broadcastId)).toBeNull();
    expect(await failUnconfirmed(h.database.db, broadcastMoves, 0)).toBeGreaterThanOrEqual(2);
    expect(await finishedAt(orgId, broadcastId)).not.toBeNull();
    expect(await finishedEvents(orgId, broadcastId)).toBe(1);
  });

  // On Citus the wait happens in a worker's shard, which the coordinator's pg_stat_activity does not show as a lock.
  it.skipIf(!postgres || Boolean(process.env.TEST_CITUS_WORKERS))(
    "records a group whose next group holds rows of the broadcast without waiting for the broadcast's lock",
    async () => {
      const { orgId, broadcastId, first, second } = await claimedInTwoGroups();
      const holder = control as pg.Client;
      await holder.query('begin');
      await holder.query('select 1 from broadcasts where org_id = $1 and id = $2 for update', [orgId, broadcastId]);
      try {
        // Not waiting: it completes while another session holds the broadcast's lock (it waited before D213).
        const recorded = await withoutWaitingForALock(
          holder,
          recordOutcomes(h.database.db, broadcastMoves, accepted(first), second),
          'the first group’s record',
        );
        expect(recorded).toHaveLength(2);
        // The last group checks the end: it waits for the lock, and finishes the broadcast once it has it.
        let done = false;
        const last = recordOutcomes(h.database.db, broadcastMoves, accepted(second)).then((rows) => {
          done = true;
          return rows;
        });
        await untilASessionWaitsForALock(holder, 'the last group’s record waiting for the broadcast’s lock');
        expect(done).toBe(false);
        await holder.query('commit');
        expect(await last).toEqual([]);
        expect(await finishedEvents(orgId, broadcastId)).toBe(1);
      } finally {
        await holder.query('rollback').catch(() => undefined);
      }
    },
  );
});

describe("a move's end check reads first and locks only a broadcast that looks ended (D359)", () => {
  it.skipIf(!postgres || Boolean(process.env.TEST_CITUS_WORKERS))(
    "records a group of a broadcast that still has pending rows without waiting for the broadcast's lock",
    async () => {
      const { orgId, broadcastId, first, second } = await claimedInTwoGroups();
      // The second group is marked too (another batch of another worker, say): still `sending` when the first records.
      expect(await startHandoffs(h.database.db, second)).toHaveLength(2);
      const holder = control as pg.Client;
      await holder.query('begin');
      await holder.query('select 1 from broadcasts where org_id = $1 and id = $2 for update', [orgId, broadcastId]);
      try {
        // Not waiting: the broadcast has pending rows in the record's view (before D359 it waited for the lock).
        const recorded = await withoutWaitingForALock(
          holder,
          recordOutcomes(h.database.db, broadcastMoves, accepted(first)),
          'the first group’s record',
        );
        expect(recorded).toEqual([]);
        await holder.query('commit');
        expect(await recordOutcomes(h.database.db, broadcastMoves, accepted(second))).toEqual([]);
        expect(await finishedEvents(orgId, broadcastId)).toBe(1);
      } finally {
        await holder.query('rollback').catch(() => undefined);
      }
    },
  );

  it.skipIf(!postgres)(
    'of two moves of the last rows at once, each seeing the other’s as pending, the sweep finishes the broadcast once',
    async () => {
      const { orgId, broadcastId, first, second } = await claimedInTwoGroups();
      expect(await startHandoffs(h.database.db, second)).toHaveLength(2);
      const mover = control as pg.Client;
      // Another transaction moves the second group and has not committed when the first group's record checks.
      await mover.query('begin');
      await mover.query(
        `update broadcast_recipients set status = 'sent', sent_at = now(), lease_until = null
         where org_id = $1 and broadcast_id = $2 and position = any($3::int[])`,
        [orgId, broadcastId, second.map((row) => row.position)],
      );
      try {
        expect(await recordOutcomes(h.database.db, broadcastMoves, accepted(first))).toEqual([]);
        await mover.query('commit');
      } finally {
        await mover.query('rollback').catch(() => undefined);
      }
      // Nothing is pending and neither saw the end.
      expect(await finishedAt(orgId, broadcastId)).toBeNull();
      expect(await organizationsWithOpenBroadcasts(h.database.db)).toContain(orgId);
      expect(await finishEndedBroadcasts(h.database.db, broadcastMoves, orgId)).toBe(1);
      expect(await finishedAt(orgId, broadcastId)).not.toBeNull();
      expect(await finishEndedBroadcasts(h.database.db, broadcastMoves, orgId)).toBe(0);
      expect(await finishedEvents(orgId, broadcastId)).toBe(1);
    },
  );

  it('finishes a broadcast once when its last groups are recorded at the same time, with the sweep after', async () => {
    for (let round = 0; round < 3; round++) {
      const { orgId, broadcastId, first, second } = await claimedInTwoGroups();
      expect(await startHandoffs(h.database.db, second)).toHaveLength(2);
      await Promise.all([
        recordOutcomes(h.database.db, broadcastMoves, accepted(first)),
        recordOutcomes(h.database.db, broadcastMoves, accepted(second)),
      ]);
      await finishEndedBroadcasts(h.database.db, broadcastMoves, orgId);
      expect(await finishedAt(orgId, broadcastId)).not.toBeNull();
      expect(await finishedEvents(orgId, broadcastId)).toBe(1);
    }
  });

  it('the sweep leaves a broadcast with pending rows alone', async () => {
    const { orgId, broadcastId, first } = await claimedInTwoGroups();
    expect(await recordOutcomes(h.database.db, broadcastMoves, accepted(first))).toEqual([]);
    expect(await finishEndedBroadcasts(h.database.db, broadcastMoves, orgId)).toBe(0);
    expect(await finishedAt(orgId, broadcastId)).toBeNull();
    expect(await finishedEvents(orgId, broadcastId)).toBe(0);
  });
});
