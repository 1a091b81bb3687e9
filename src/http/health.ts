// Probes for orchestrators beside /healthz: /livez (the process answers) and /readyz (the database is reachable,
// its migrations are applied, and every extra named check the wiring passes in holds). While the database is known
// to be unreachable, every other request is answered at once with 503 `service_unavailable` and `Retry-After`
// instead of waiting on a connection (decisions D24).
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Database } from '../db/database.ts';
import { migrations } from '../db/migrate.ts';
import { serviceUnavailable } from './errors.ts';

/** A named readiness check (say, Redis): resolves true when ready; a rejection counts as not ready. */
export type ReadinessCheck = () => Promise<boolean>;

const PROBE_PATHS = new Set(['/livez', '/readyz', '/healthz']);
const CHECK_TIMEOUT_MS = 2000;

function withTimeout(check: () => Promise<boolean>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS);
  });
  return Promise.race([check().catch(() => false), timeout]).finally(() => clearTimeout(timer));
}

async function migrationsApplied(database: Database): Promise<boolean> {
  const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(database.db);
  const applied = new Set(rows.rows.map((row) => row.name));
  return Object.keys(migrations).every((name) => applied.has(name));
}

export function registerHealthRoutes(
  app: FastifyInstance,
  deps: { database: Database; checks?: Record<string, ReadinessCheck> },
): void {
  const { database } = deps;
  app.addHook('onRequest', async (request) => {
    if (database.health.available) return;
    if (PROBE_PATHS.has(request.url.split('?')[0] ?? '')) return;
    throw serviceUnavailable();
  });

  app.get('/livez', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const names = ['database', 'migrations', ...Object.keys(deps.checks ?? {})];
    const results = await Promise.all([
      withTimeout(async () => {
        await sql`select 1`.execute(database.db);
        return true;
      }),
      withTimeout(() => migrationsApplied(database)),
      ...Object.values(deps.checks ?? {}).map(withTimeout),
    ]);
    const checks = Object.fromEntries(names.map((name, index) => [name, results[index] ? 'ok' : 'failing']));
    const ready = results.every(Boolean);
    if (!ready) reply.code(503).header('Retry-After', '1');
    return { status: ready ? 'ready' : 'not_ready', checks };
  });
}
