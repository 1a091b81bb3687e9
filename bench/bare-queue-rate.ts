// The fan-out's baseline, shared by the benchmarks: `size` fresh rows in `bare_queue` drained by `processes` bare
// SKIP LOCKED loops (bench/bare-queue.ts, child processes like `crm worker`s); answers messages per second from the
// first message marked to the last, as the database saw them (process start-up excluded), and the WAL bytes the
// server wrote per message meanwhile (the server's counter, so other work on it counts too).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const root = fileURLToPath(new URL('..', import.meta.url));

export async function bareQueueRate(
  databaseUrl: string,
  size: number,
  processes: number,
): Promise<{ rate: number; walPerMessage: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `create table if not exists bare_queue (id bigserial primary key, status text not null, payload jsonb,
        sent_at timestamptz)`,
    );
    await client.query('truncate bare_queue');
    await client.query(
      `insert into bare_queue (status, payload) select 'queued', '{"to":"+15550000000"}' from generate_series(1, $1)`,
      [size],
    );
    await client.query('checkpoint');
    await client.query(`select pg_stat_reset_shared('wal')`);
    const started = Date.now();
    await Promise.all(
      Array.from(
        { length: processes },
        () =>
          new Promise<void>((resolve, reject) => {
            const child = spawn(process.execPath, ['bench/bare-queue.ts', databaseUrl], {
              cwd: root,
              stdio: 'inherit',
            });
            child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`bare loop exited ${code}`))));
          }),
      ),
    );
    const span = await client.query(
      'select extract(epoch from max(sent_at) - min(sent_at)) as seconds, count(*) as n from bare_queue',
    );
    const seconds = Number(span.rows[0].seconds) || (Date.now() - started) / 1000;
    const wal = await client.query('select wal_bytes::float8 as bytes from pg_stat_wal');
    const n = Number(span.rows[0].n);
    return { rate: n / seconds, walPerMessage: Number(wal.rows[0]?.bytes) / n };
  } finally {
    await client.end();
  }
}
