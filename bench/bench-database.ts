// What the benchmarks share: the PostgreSQL server they run on (BENCH_DATABASE_URL), a fresh database on it, a
// rate-limit store that never limits (the benchmarks measure the API, not the budget), and a log line to stderr.
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import type { RateLimitStore } from '../src/http/rate-limit.ts';

export const benchServer = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/crm_bench');

export const unlimited: RateLimitStore = { hit: async () => 1, close: async () => {} };

/** ` template X` when BENCH_TEMPLATE names a database to copy. */
export function templateClause(): string {
  const template = process.env.BENCH_TEMPLATE;
  if (!template) return '';
  if (!/^[a-z_][a-z0-9_]*$/.test(template)) throw new Error(`unsupported template name ${template}`);
  return ` template ${template}`;
}

export const log = (line: string) => process.stderr.write(`${line}\n`);

/**
 * Drops and creates database `name` on the bench server; answers its URL. With BENCH_TEMPLATE (bench/history.ts) it is
 * a copy of that database (a year of other organizations' history), which the benchmark's migrations find up to date.
 */
export async function freshDatabase(name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsupported database name ${name}`);
  const admin = new URL(benchServer);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`drop database if exists ${name} with (force)`);
    await client.query(`create database ${name}${templateClause()}`);
  } finally {
    await client.end();
  }
  const url = new URL(benchServer);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * A POST (or `method`) through the in-process app with a bearer token (an API key or the operator's), its JSON answer
 * or a throw.
 */
export const poster =
  (app: FastifyInstance, method: 'POST' | 'PUT' = 'POST') =>
  // biome-ignore lint/suspicious/noExplicitAny: fixtures read the API's answers loosely, as a JSON client would.
  async (url: string, body: unknown, key: string): Promise<any> => {
    const response = await app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    if (response.statusCode >= 400) throw new Error(`${url}: ${response.statusCode} ${response.body}`);
    return response.json();
  };
