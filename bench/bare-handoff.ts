// The bare hand-off the latency benchmarks (bench/replies.ts, bench/automation.ts) are measured beside in the same
// run: a row inserted and notified in one transaction, marked sent by a LISTEN/NOTIFY listener on another connection.
import pg from 'pg';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The bare baseline: insert + notify in one transaction; a listener marks the row sent. Answers each row's lag from
 * the commit to its `sent_at` (one row every `gapMs`), unsorted.
 */
export async function bareBaseline(url: string, count: number, gapMs: number): Promise<number[]> {
  const writer = new pg.Client({ connectionString: url });
  const listener = new pg.Client({ connectionString: url });
  await Promise.all([writer.connect(), listener.connect()]);
  await writer.query(`drop table if exists bare_replies;
    create table bare_replies (id bigint generated always as identity primary key, status text not null default 'queued',
      sent_at timestamptz)`);
  await listener.query('listen bare_replies');
  let busy = Promise.resolve();
  listener.on('notification', () => {
    busy = busy.then(async () => {
      await listener.query(
        `with c as (select id from bare_replies where status = 'queued' order by id limit 50 for update skip locked)
         update bare_replies q set status = 'sent', sent_at = clock_timestamp() from c where q.id = c.id`,
      );
    });
  });
  const lags: number[] = [];
  for (let index = 0; index < count; index++) {
    await writer.query('begin');
    const { rows } = await writer.query(`insert into bare_replies default values returning id`);
    await writer.query(`select pg_notify('bare_replies', '')`);
    await writer.query('commit');
    const answeredAt = Date.now();
    let sentAt: number | undefined;
    while (sentAt === undefined) {
      const row = await writer.query('select sent_at from bare_replies where id = $1', [rows[0].id]);
      if (row.rows[0].sent_at) sentAt = (row.rows[0].sent_at as Date).getTime();
      else await pause(2);
    }
    lags.push(Math.max(0, sentAt - answeredAt));
    await pause(gapMs);
  }
  await busy;
  await Promise.all([writer.end(), listener.end()]);
  return lags;
}
