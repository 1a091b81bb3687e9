// The fan-out's baseline: a bare `FOR UPDATE SKIP LOCKED` loop on the same database doing the minimum per message
// (claim a batch, mark it sent, one statement), run as a child process like a `crm worker`. `node bench/bare-queue.ts
// URL` drains `bare_queue` and exits.
import pg from 'pg';

const client = new pg.Client({ connectionString: process.argv[2] });
await client.connect();
for (;;) {
  const claimed = await client.query(
    `with c as (select id from bare_queue where status = 'queued' order by id limit 50 for update skip locked)
     update bare_queue q set status = 'sent', sent_at = clock_timestamp() from c where q.id = c.id`,
  );
  if (claimed.rowCount === 0) break;
}
await client.end();
