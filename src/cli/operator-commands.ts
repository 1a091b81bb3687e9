// `crm org | key | account | user …`: the operator's records from a terminal, with the same services and schemas as
// /admin/v1, on the configured database (DATABASE_URL, or the embedded one in DATA_DIR). Arguments are checked
// before the database is opened.
import type { TSchema } from 'typebox';
import type { Config } from '../config.ts';
import type {
  ApiKeyInput,
  MessagingAccountInput,
  MessagingAccountPatch,
  OrganizationInput,
  OrganizationPatch,
} from '../modules/operator/operator.schemas.ts';
import type { UserInput } from '../modules/users/users.schemas.ts';
import type { Wiring } from '../wiring.ts';
import { announceDatabase, refuseNewDatabase } from './database-choice.ts';
import { print, required, UsageError } from './output.ts';

/** The operator commands that only read: they never create a database (D291). */
const READ_ONLY = new Set(['org list', 'org show', 'key list', 'account list']);

export const OPERATOR_USAGE = `Operator records (same rules as /admin/v1; prints JSON). On the embedded database (DATA_DIR) they refuse to run
while another process, such as a running server, holds it: use that server's /admin/v1 API instead. The ones
that only read (org list, org show, key list, account list) refuse a DATA_DIR that holds no database rather than create one.
  org list                      every organization
  org create --name NAME [--plan scale] [--trial] [--trial-ends-at ISO] [--subscription-status active]
             [--timezone UTC] [--language en]
  org update ORG_ID [same options as create]
  org show ORG_ID
  key list --org ORG_ID                     the organization's keys (never the keys themselves)
  key create --org ORG_ID [--name NAME] [--scopes contacts:read,broadcasts:read] [--expires-at ISO]
                                            prints the key once; every scope ("*") unless --scopes
  key revoke --org ORG_ID KEY_ID
  account list --org ORG_ID                 the organization's messaging accounts, balances, limits and numbers
  account create --org ORG_ID [--business-account-id ID] [--balance 100] [--limit 1000]
                 [--phone +15551234567 [--phone-number-id ID]]...
  account update ACCOUNT_ID [--balance 500] [--limit 1000]   a top-up, or a new 24-hour limit
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

type Services = Wiring['services'];
/** A command whose arguments are checked: what is left needs the database. */
type Action = (services: Services) => Promise<unknown>;

/**
 * Checks a command's arguments and input before any database is opened: a mistake in how it was called is a usage
 * error (exit 2) that never creates, locks or migrates a database.
 */
async function prepare(name: string, rest: string[], values: OperatorValues): Promise<Action> {
  const { ApiKeyInput, MessagingAccountInput, MessagingAccountPatch, OrganizationInput, OrganizationPatch } =
    await import('../modules/operator/operator.schemas.ts');
  switch (name) {
    case 'org create': {
      const input = await check<OrganizationInput>(OrganizationInput, organizationFields(values));
      return ({ operator }) => operator.createOrganization(input);
    }
    case 'org update': {
      const orgId = required(rest[0], 'ORG_ID');
      const patch = await check<OrganizationPatch>(OrganizationPatch, organizationFields(values));
      return ({ operator }) => operator.updateOrganization(orgId, patch);
    }
    case 'org list':
      return ({ operator }) => operator.listOrganizations();
    case 'org show': {
      const orgId = required(rest[0], 'ORG_ID');
      return ({ operator }) => operator.getOrganization(orgId);
    }
    case 'key list': {
      const orgId = required(values.org, '--org');
      return ({ operator }) => operator.listApiKeys(orgId);
    }
    case 'key create': {
      const orgId = required(values.org, '--org');
      // decisions §18: scopes as one comma-separated list (or the flag repeated); the same checks as /admin/v1.
      const scopes = values.scopes?.flatMap((list) => list.split(',')).map((scope) => scope.trim());
      const input = await check<ApiKeyInput>(ApiKeyInput, {
        ...(values.name !== undefined ? { name: values.name } : {}),
        ...(scopes ? { scopes } : {}),
        ...(values['expires-at'] !== undefined ? { expires_at: values['expires-at'] } : {}),
      });
      return ({ operator }) => operator.createApiKey(orgId, input);
    }
    case 'key revoke': {
      const orgId = required(values.org, '--org');
      const keyId = required(rest[0], 'KEY_ID');
      return async ({ operator }) => {
        await operator.revokeApiKey(orgId, keyId);
        return { revoked: keyId };
      };
    }
    case 'account list': {
      const orgId = required(values.org, '--org');
      return ({ operator }) => operator.listOrganizationMessagingAccounts(orgId);
    }
    case 'account update': {
      const accountId = required(rest[0], 'ACCOUNT_ID');
      const balance = number(values.balance, '--balance');
      const limit = number(values.limit, '--limit');
      const patch = await check<MessagingAccountPatch>(MessagingAccountPatch, {
        ...(balance !== undefined ? { balance } : {}),
        ...(limit !== undefined ? { messaging_limit_24h: limit } : {}),
      });
      return ({ operator }) => operator.updateMessagingAccount(accountId, patch);
    }
    case 'account create': {
      const orgId = required(values.org, '--org');
      const phones = values.phone ?? [];
      const ids = values['phone-number-id'] ?? [];
      const fields: Record<string, unknown> = {
        numbers: phones.map((phone, index) => ({ phone, ...(ids[index] ? { phone_number_id: ids[index] } : {}) })),
      };
      if (values['business-account-id']) fields.business_account_id = values['business-account-id'];
      const balance = number(values.balance, '--balance');
      if (balance !== undefined) fields.balance = balance;
      const limit = number(values.limit, '--limit');
      if (limit !== undefined) fields.messaging_limit_24h = limit;
      const input = await check<MessagingAccountInput>(MessagingAccountInput, fields);
      return ({ operator }) => operator.createMessagingAccount(orgId, input);
    }
    case 'user add': {
      const { UserInput } = await import('../modules/users/users.schemas.ts');
      const orgId = required(values.org, '--org');
      // decisions §17: the same invitation as POST /admin/v1/organizations/{org_id}/users.
      const input = await check<UserInput>(UserInput, {
        email: required(values.email, '--email'),
        role: required(values.role, '--role'),
        ...(values.name !== undefined ? { name: values.name } : {}),
      });
      return ({ users }) => users.invite(orgId, input);
    }
    default:
      throw new UsageError(`unknown command: ${name}`);
  }
}

export async function operatorCommand(
  config: Config,
  command: string,
  sub: string | undefined,
  rest: string[],
  values: OperatorValues,
): Promise<void> {
  const name = [command, sub].filter(Boolean).join(' ');
  const action = await prepare(name, rest, values);
  announceDatabase(config);
  if (READ_ONLY.has(name)) refuseNewDatabase(config, name);
  const { openConfiguredDatabase, wireFromConfig } = await import('../server.ts');
  const database = await openConfiguredDatabase(config);
  await (await import('../db/migrate.ts')).migrateToLatest(database.db);
  // Warnings (an unreachable Redis, say) go to stderr: stdout carries the command's JSON.
  const { pino } = await import('pino');
  const wiring = wireFromConfig(config, database, pino({ level: 'warn' }, pino.destination(2)));
  try {
    print(await action(wiring.services));
  } finally {
    await wiring.close();
  }
}
