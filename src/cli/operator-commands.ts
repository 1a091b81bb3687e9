// `crm org | key | account …`: the operator's records from a terminal, with the same services and schemas as
// /admin/v1, on the configured database (DATABASE_URL, or the embedded one in DATA_DIR).
import type { TSchema } from 'typebox';
import type { Config } from '../config.ts';
import { announceDatabase, refuseNewDatabase } from './database-choice.ts';
import { print, required, UsageError } from './output.ts';

/** The operator commands; the ones that only read never create a database (issue 23 point 8). */
const COMMANDS = new Set([
  'org list',
  'org show',
  'org create',
  'org update',
  'key list',
  'key create',
  'key revoke',
  'account create',
  'user add',
]);
const READ_ONLY = new Set(['org list', 'org show', 'key list']);

export const OPERATOR_USAGE = `Operator records (same rules as /admin/v1; prints JSON). On the embedded database (DATA_DIR) they refuse to run
while another process, such as a running server, holds it: use that server's /admin/v1 API instead. The ones
that only read (org list, org show, key list) refuse a DATA_DIR that holds no database rather than create one.
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
  user add --org ORG_ID --email EMAIL --role admin|agent [--name NAME]
                                a person of the console; prints a one-time sign-in link (valid 24 hours)`;

export interface OperatorValues {
  name?: string | undefined;
  plan?: string | undefined;
  trial?: boolean | undefined;
  'no-trial'?: boolean | undefined;
  'trial-ends-at'?: string | undefined;
  'subscription-status'?: string | undefined;
  timezone?: string | undefined;
  language?: string | undefined;
  org?: string | undefined;
  scopes?: string[] | undefined;
  'expires-at'?: string | undefined;
  'business-account-id'?: string | undefined;
  balance?: string | undefined;
  limit?: string | undefined;
  phone?: string[] | undefined;
  'phone-number-id'?: string[] | undefined;
  email?: string | undefined;
  role?: string | undefined;
}

async function check<T>(schema: TSchema, value: unknown): Promise<T> {
  const { Compile } = await import('typebox/compile');
  const validator = Compile(schema);
  if (validator.Check(value)) return value as T;
  const problems = [...validator.Errors(value)].map((error) => `${error.instancePath || '/'} ${error.message}`);
  throw new UsageError(`invalid input: ${problems.join('; ')}`);
}

function organizationFields(values: OperatorValues) {
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

function number(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed)) throw new UsageError(`${flag} must be a number`);
  return parsed;
}

export async function operatorCommand(
  config: Config,
  command: string,
  sub: string | undefined,
  rest: string[],
  values: OperatorValues,
): Promise<void> {
  const name = `${command} ${sub}`;
  if (!COMMANDS.has(name)) throw new UsageError(`unknown command: ${[command, sub].filter(Boolean).join(' ')}`);
  announceDatabase(config);
  if (READ_ONLY.has(name)) refuseNewDatabase(config, name);
  const { openConfiguredDatabase, wireFromConfig } = await import('../server.ts');
  const { ApiKeyInput, MessagingAccountInput, OrganizationInput, OrganizationPatch } = await import(
    '../modules/operator/operator.schemas.ts'
  );
  const { UserInput } = await import('../modules/users/users.schemas.ts');
  const database = await openConfiguredDatabase(config);
  await (await import('../db/migrate.ts')).migrateToLatest(database.db);
  // Warnings (an unreachable Redis, say) go to stderr: stdout carries the command's JSON.
  const { pino } = await import('pino');
  const wiring = wireFromConfig(config, database, pino({ level: 'warn' }, pino.destination(2)));
  try {
    const { operator, users } = wiring.services;
    switch (name) {
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
        return print(await operator.listApiKeys(required(values.org, '--org')));
      case 'org show':
        return print(await operator.getOrganization(required(rest[0], 'ORG_ID')));
      case 'key create': {
        // decisions §18: scopes as one comma-separated list (or the flag repeated); the same checks as /admin/v1.
        const scopes = values.scopes?.flatMap((list) => list.split(',')).map((scope) => scope.trim());
        const input = await check<Parameters<typeof operator.createApiKey>[1]>(ApiKeyInput, {
          ...(values.name !== undefined ? { name: values.name } : {}),
          ...(scopes ? { scopes } : {}),
          ...(values['expires-at'] !== undefined ? { expires_at: values['expires-at'] } : {}),
        });
        return print(await operator.createApiKey(required(values.org, '--org'), input));
      }
      case 'key revoke':
        await operator.revokeApiKey(required(values.org, '--org'), required(rest[0], 'KEY_ID'));
        return print({ revoked: rest[0] });
      case 'account create': {
        const phones = values.phone ?? [];
        const ids = values['phone-number-id'] ?? [];
        const input: Record<string, unknown> = {
          numbers: phones.map((phone, index) => ({ phone, ...(ids[index] ? { phone_number_id: ids[index] } : {}) })),
        };
        if (values['business-account-id']) input.business_account_id = values['business-account-id'];
        const balance = number(values.balance, '--balance');
        if (balance !== undefined) input.balance = balance;
        const limit = number(values.limit, '--limit');
        if (limit !== undefined) input.messaging_limit_24h = limit;
        return print(
          await operator.createMessagingAccount(
            required(values.org, '--org'),
            await check(MessagingAccountInput, input),
          ),
        );
      }
      case 'user add': {
        // decisions §17: the same invitation as POST /admin/v1/organizations/{org_id}/users.
        const input = await check<Parameters<typeof users.invite>[1]>(UserInput, {
          email: required(values.email, '--email'),
          role: required(values.role, '--role'),
          ...(values.name !== undefined ? { name: values.name } : {}),
        });
        return print(await users.invite(required(values.org, '--org'), input));
      }
      default:
        throw new UsageError(`unknown command: ${[command, sub].filter(Boolean).join(' ')}`);
    }
  } finally {
    await wiring.close();
  }
}
