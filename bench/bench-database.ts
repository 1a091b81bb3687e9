// What the benchmarks share: the PostgreSQL server they run on (BENCH_DATABASE_URL), a fresh database on it, a
// rate-limit store that never limits (the benchmarks measure the API, not the budget), and a log line to stderr.
import pg from 'pg';
import type { RateLimitStore } from '../src/http/rate-limit.ts';

export const benchServer = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/crm_bench');

export const unlimited: RateLimitStore = { hit: async () => 1, close: async () => {} };

export const log = (line: string) => process.stderr.write(`${line}\n`);

/** Drops and creates database `name` on the bench server; answers its URL. */
export async function freshDatabase(name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsupported database name ${name}`);
  const admin = new URL(benchServer);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`drop database if exists ${name} with (force)`);
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(benchServer);
  url.pathname = `/${name}`;
  return url.toString();
}
