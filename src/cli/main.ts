// `crm <command>`: the same wiring as src/main.ts in other roles, the operator's records from a terminal, and the
// public API through the SDK. Every command prints its result with `print` (output.ts) and every mistake in how a
// command was called is a `UsageError`: the message, the usage, exit code 2.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.ts';
import { DataDirLockedError } from '../db/data-dir-lock.ts';
import { ApiError } from '../http/api-error.ts';
import { API_USAGE, apiCommand, describeApiFailure } from './api-commands.ts';
import { BACKUP_USAGE, backupCommand, restoreCommand } from './backup-commands.ts';
import { announceDatabase, refuseNewDatabase } from './database-choice.ts';
import { OPERATOR_USAGE, operatorCommand } from './operator-commands.ts';
import { CommandRefused, Interrupted, print, required, UsageError } from './output.ts';

// The server, the database and the operator's schemas are loaded by the commands that use them: the public API
// commands (`crm contacts import` of a large file, say) run without them, in a third of the memory.
const server = () => import('../server.ts');

const USAGE = `Usage: crm <command> [options]

Roles:
  serve [--no-worker]           the HTTP API (with the worker loop unless --no-worker)
  worker                        the worker loop alone
  migrate                       apply database migrations and exit

${OPERATOR_USAGE}

${BACKUP_USAGE}

${API_USAGE}

Configuration comes from the environment (DATABASE_URL, DATA_DIR, CRM_API_KEY, CRM_BASE_URL, ...); see the README.
DATA_DIR defaults to the project's data directory (the one \`npm start\` uses), from whatever directory crm runs;
commands that open a database name it on stderr, and the ones that only read never create one.`;

const options = {
  name: { type: 'string' },
  plan: { type: 'string' },
  trial: { type: 'boolean' },
  'no-trial': { type: 'boolean' },
  'trial-ends-at': { type: 'string' },
  'subscription-status': { type: 'string' },
  timezone: { type: 'string' },
  language: { type: 'string' },
  org: { type: 'string' },
  scopes: { type: 'string', multiple: true },
  'expires-at': { type: 'string' },
  'business-account-id': { type: 'string' },
  balance: { type: 'string' },
  limit: { type: 'string' },
  phone: { type: 'string', multiple: true },
  'phone-number-id': { type: 'string', multiple: true },
  email: { type: 'string' },
  role: { type: 'string' },
  'no-worker': { type: 'boolean' },
  q: { type: 'string' },
  cursor: { type: 'string' },
  all: { type: 'boolean' },
  'match-on': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  const [command, sub, ...rest] = positionals;
  if (values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  switch (command) {
    case 'serve':
      return (await server()).run(loadConfig(), { http: true, worker: !values['no-worker'] });
    case 'worker':
      return (await server()).run(loadConfig(), { http: false, worker: true });
    case 'migrate': {
      const config = loadConfig();
      announceDatabase(config);
      const database = await (await server()).openConfiguredDatabase(config);
      try {
        const result = await (await import('../db/migrate.ts')).migrateToLatest(database.db);
        const applied = (result.results ?? []).map((migration) => migration.migrationName);
        process.stdout.write(`${applied.length ? `applied: ${applied.join(', ')}` : 'up to date'}\n`);
      } finally {
        await database.close();
      }
      return;
    }
    case 'org':
    case 'key':
    case 'account':
    case 'user':
      return operatorCommand(loadConfig(), command, sub, rest, values);
    case 'me':
    case 'contacts':
      return apiCommand(command, sub, rest, values);
    case 'backup':
    case 'restore': {
      const file = required(sub, 'FILE');
      const config = loadConfig();
      announceDatabase(config);
      if (command === 'backup') refuseNewDatabase(config, 'backup');
      return print(await (command === 'backup' ? backupCommand(config, file) : restoreCommand(config, file)));
    }
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  if (
    error instanceof UsageError ||
    error instanceof ConfigError ||
    (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
  ) {
    process.stderr.write(`crm: ${(error as Error).message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (error instanceof Interrupted) {
    process.stderr.write(`crm: ${error.message}\n`);
    process.exit(130);
  }
  // The server's own refusals (its module is loaded only by the commands that serve: the name, not the class).
  const portTaken = error instanceof Error && error.name === 'PortUnavailableError';
  if (error instanceof DataDirLockedError || portTaken || error instanceof CommandRefused) {
    process.stderr.write(`crm: ${error.message}\n`);
    process.exit(1);
  }
  const apiFailure = describeApiFailure(error);
  if (apiFailure) {
    process.stderr.write(`crm: ${apiFailure.message}\n`);
    process.exit(apiFailure.exitCode);
  }
  if (error instanceof ApiError) {
    process.stderr.write(`crm: ${JSON.stringify({ status: error.status, detail: error.detail })}\n`);
    process.exit(1);
  }
  throw error;
}
