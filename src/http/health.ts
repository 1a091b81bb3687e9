// Probes for orchestrators beside /healthz: /livez (the process answers) and /readyz (the database is reachable,
// its migrations are applied, and every extra named check the wiring passes in holds). While the database is known
// to be unreachable, every other request is answered at once with 503 `service_unavailable` and `Retry-After`
// instead of waiting on a connection (decisions D24). Its checks run outside the pool's queue (Database.probe): a
// busy pool is not an unready process (D130).
import type { FastifyInstance } from 'fastify';
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

/** Whether every migration this process knows is applied; once true it stays true for the process's life. */
function migrationsCheck(database: Database): () => Promise<boolean> {
  let applied = false;
  return async () => {
    if (applied) return true;
    const rows = await database.probe<{ name: string }>('select name from kysely_migration');
    const names = new Set(rows.map((row) => row.name));
    applied = Object.keys(migrations).every((name) => names.has(name));
    return applied;
  };
}

export function registerHealthRoutes(
  app: FastifyInstance,
  deps: { database: Database; checks?: Record<string, ReadinessCheck> },
): void {
  const { database } = deps;
  const migrationsApplied = migrationsCheck(database);
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
        await database.probe('select 1');
        return true;
      }),
      withTimeout(migrationsApplied),
      ...Object.values(deps.checks ?? {}).map(withTimeout),
    ]);
    const checks = Object.fromEntries(names.map((name, index) => [name, results[index] ? 'ok' : 'failing']));
    const ready = results.every(Boolean);
    if (!ready) reply.code(503).header('Retry-After', '1');
    return { status: ready ? 'ready' : 'not_ready', checks };
  });
}
