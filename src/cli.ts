// `crm <command>`: the same wiring as main.ts in other roles, and the operator's records from a terminal.
import { parseArgs } from 'node:util';
import type { TSchema } from 'typebox';
import { API_USAGE, apiCommand, describeApiFailure } from './cli-api.ts';
import { BACKUP_USAGE, BackupRefused, backupCommand, restoreCommand } from './cli-backup.ts';
import { ConfigError, loadConfig } from './config.ts';
import { DataDirLockedError } from './db/data-dir-lock.ts';
import { ApiError } from './http/api-error.ts';

// The server, the database and the operator's schemas are loaded by the commands that use them: the public API
// commands (`crm contacts import` of a large file, say) run without them, in a third of the memory.
const server = () => import('./server.ts');
const migrations = () => import('./db/migrate.ts');

const USAGE = `Usage: crm <command> [options]

Roles:
  serve [--no-worker]           the HTTP API (with the worker loop unless --no-worker)
  worker                        the worker loop alone
  migrate                       apply database migrations and exit

Operator records (same rules as /admin/v1; prints JSON). On the embedded database (DATA_DIR) they refuse to run
while another process, such as a running server, holds it: use that server's /admin/v1 API instead.
  org list                      every organization
  org create --name NAME [--plan scale] [--trial] [--trial-ends-at ISO] [--subscription-status active]
             [--timezone UTC] [--language en]
  org update ORG_ID [same options as create]
  org show ORG_ID
  key list --org ORG_ID                     the organization's keys (never the keys themselves)
  key create --org ORG_ID [--name NAME] [--scopes contacts:read,broadcasts:read] [--expires-at ISO]
                                            prints the key once; every scope ("*") unless --scopes
  key revoke --org ORG_ID KEY_ID
  account create --org ORG_ID [--business-account-id ID] [--balance 100] [--limit 1000]
                 [--phone +15551234567 [--phone-number-id ID]]...

${BACKUP_USAGE}

${API_USAGE}

Configuration comes from the environment (DATABASE_URL, DATA_DIR, CRM_API_KEY, CRM_BASE_URL, ...); see the README.`;

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
  'no-worker': { type: 'boolean' },
  q: { type: 'string' },
  cursor: { type: 'string' },
  all: { type: 'boolean' },
  'match-on': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

class UsageError extends Error {}

async function check<T>(schema: TSchema, value: unknown): Promise<T> {
  const { Compile } = await import('typebox/compile');
  const validator = Compile(schema);
  if (validator.Check(value)) return value as T;
  const problems = [...validator.Errors(value)].map((error) => `${error.instancePath || '/'} ${error.message}`);
  throw new UsageError(`invalid input: ${problems.join('; ')}`);
}

function organizationFields(values: Record<string, unknown>) {
  const fields: Record<string, unknown> = {};
  if (values.name !== undefined) fields.name = values.name;
  if (values.plan !== undefined) fields.plan = values.plan;
  if (values.trial) fields.trial = true;
  if (values['no-trial']) fields.trial = false;
  if (values['trial-ends-at'] !== undefined) fields.trial_ends_at = values['trial-ends-at'];
  if (values['subscription-status'] !== undefined) fields.subscription_status = values['subscription-status'];
  if (values.timezone !== undefined) fields.timezone = values.timezone;
  if (values.language !== undefined) fields.language = values.language;
  return fields;
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required`);
  return value;
}

function number(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed)) throw new UsageError(`${flag} must be a number`);
  return parsed;
}

async function operatorCommand(
  command: string,
  sub: string | undefined,
  rest: string[],
  values: Record<string, unknown>,
) {
  const config = loadConfig();
  const { openConfiguredDatabase, wireFromConfig } = await server();
  const { ApiKeyInput, MessagingAccountInput, OrganizationInput, OrganizationPatch } = await import(
    './modules/operator/operator.schemas.ts'
  );
  const database = await openConfiguredDatabase(config);
  await (await migrations()).migrateToLatest(database.db);
  // Warnings (an unreachable Redis, say) go to stderr: stdout carries the command's JSON.
  const { pino } = await import('pino');
  const wiring = wireFromConfig(config, database, pino({ level: 'warn' }, pino.destination(2)));
  try {
    const { operator } = wiring.services;
    const print = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    switch (`${command} ${sub}`) {
      case 'org create':
        return print(await operator.createOrganization(await check(OrganizationInput, organizationFields(values))));
      case 'org update':
        return print(
          await operator.updateOrganization(
            required(rest[0], 'ORG_ID'),
            await check(OrganizationPatch, organizationFields(values)),
          ),
        );
      case 'org list':
        return print(await operator.listOrganizations());
      case 'key list':
        return print(await operator.listApiKeys(required(values.org as string, '--org')));
      case 'org show':
        return print(await operator.getOrganization(required(rest[0], 'ORG_ID')));
      case 'key create': {
        // decisions §18: scopes as one comma-separated list (or the flag repeated); the same checks as /admin/v1.
        const scopes = (values.scopes as string[] | undefined)?.flatMap((list) => list.split(',')).map((s) => s.trim());
        const input = await check<Parameters<typeof operator.createApiKey>[1]>(ApiKeyInput, {
          ...(values.name !== undefined ? { name: values.name } : {}),
          ...(scopes ? { scopes } : {}),
          ...(values['expires-at'] !== undefined ? { expires_at: values['expires-at'] } : {}),
        });
        return print(await operator.createApiKey(required(values.org as string, '--org'), input));
      }
      case 'key revoke':
        await operator.revokeApiKey(required(values.org as string, '--org'), required(rest[0], 'KEY_ID'));
        return print({ revoked: rest[0] });
      case 'account create': {
        const phones = (values.phone as string[] | undefined) ?? [];
        const ids = (values['phone-number-id'] as string[] | undefined) ?? [];
        const input: Record<string, unknown> = {
          numbers: phones.map((phone, index) => ({ phone, ...(ids[index] ? { phone_number_id: ids[index] } : {}) })),
        };
        if (values['business-account-id']) input.business_account_id = values['business-account-id'];
        const balance = number(values.balance as string | undefined, '--balance');
        if (balance !== undefined) input.balance = balance;
        const limit = number(values.limit as string | undefined, '--limit');
        if (limit !== undefined) input.messaging_limit_24h = limit;
        return print(
          await operator.createMessagingAccount(
            required(values.org as string, '--org'),
            await check(MessagingAccountInput, input),
          ),
        );
      }
      default:
        throw new UsageError(`unknown command: ${command} ${sub ?? ''}`);
    }
  } finally {
    await wiring.close();
  }
}

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
      const database = await (await server()).openConfiguredDatabase(loadConfig());
      try {
        const result = await (await migrations()).migrateToLatest(database.db);
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
      return operatorCommand(command, sub, rest, values);
    case 'me':
    case 'contacts':
      return apiCommand(command, sub, rest, values);
    case 'backup':
    case 'restore': {
      const file = required(sub, 'FILE');
      const done = await (command === 'backup'
        ? backupCommand(loadConfig(), file)
        : restoreCommand(loadConfig(), file));
      process.stdout.write(`${JSON.stringify(done)}\n`);
      return;
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
  if (error instanceof DataDirLockedError || error instanceof BackupRefused) {
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
