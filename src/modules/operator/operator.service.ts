// The operator's rules: organizations, keys, messaging accounts and numbers. Used by /admin/v1 and the CLI alike.
import { randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/errors.ts';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound, validationError } from '../../http/errors.ts';
import { ALL_SCOPES } from '../../http/scopes.ts';
import { generateApiKey } from '../../lib/api-keys.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import { lookAgainAtHeld } from '../broadcasts/broadcasts.repo.ts';
import { setBalance, updateAccountRow } from '../messaging-accounts/accounts.repo.ts';
import * as repo from './operator.repo.ts';
import type {
  ApiKeyInput,
  MessagingAccountInput,
  MessagingAccountPatch,
  NumberInput,
  OrganizationInput,
  OrganizationPatch,
} from './operator.schemas.ts';

export interface OperatorDeps {
  db: Kysely<DB>;
  clock: Clock;
  /** With `cloud`, the platform's own ids must be given; the sandbox makes them up. */
  platform: 'sandbox' | 'cloud';
  /**
   * Tells every API process that a key was revoked or an organization changed, so that cached keys are read
   * again on their next use (decisions §8: a revoked key stops working at once). Absent: nothing caches.
   */
  announceAccessChange?: () => Promise<void>;
}

const DEFAULT_PRICES = { MARKETING: 1, UTILITY: 1, AUTHENTICATION: 1 };

function checkTimezone(timezone: string | undefined, loc: string[]): void {
  if (timezone === undefined) return;
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw validationError(loc, 'Input should be a valid IANA time zone', 'value_error', { input: timezone });
  }
}

/** Digits of the platform's id style (the Cloud API uses long numeric ids). */
function sandboxPlatformId(): string {
  return `${randomInt(1, 10)}${Array.from({ length: 14 }, () => randomInt(0, 10)).join('')}`;
}

export function createOperatorService(deps: OperatorDeps) {
  const { db, clock } = deps;

  /** Runs after the change is committed; a change that could not be announced is not reported as done. */
  async function announce() {
    if (!deps.announceAccessChange) return;
    try {
      await deps.announceAccessChange();
    } catch {
      // The change is stored; repeating the request (revoking twice, the same patch) announces it again.
      throw new ApiError(503, 'service_unavailable', { 'Retry-After': '1' });
    }
  }

  async function getOrganization(orgId: string) {
    const org = await repo.findOrganization(db, orgId);
    if (!org) throw notFound();
    return org;
  }

  type AccountRow = NonNullable<Awaited<ReturnType<typeof repo.findAccount>>>;
  type ChannelRow = Awaited<ReturnType<typeof repo.listAccountChannels>>[number];

  const viewOf = (account: AccountRow, channels: ChannelRow[]) => ({
    ...account,
    prices: { ...DEFAULT_PRICES, ...account.prices },
    numbers: channels.map((channel) => ({ ...channel, business_account_id: account.business_account_id })),
  });

  async function listMessagingAccounts(orgId: string) {
    // Two statements whatever the number of accounts: the accounts, then all their numbers.
    const [accounts, channels] = await Promise.all([
      repo.listAccounts(db, orgId),
      repo.listOrganizationChannels(db, orgId),
    ]);
    return accounts.map((account) =>
      viewOf(
        account,
        channels.filter((channel) => channel.account_id === account.id),
      ),
    );
  }

  async function accountView(orgId: string, accountId: string) {
    const account = await repo.findAccount(db, orgId, accountId);
    if (!account) throw notFound();
    return viewOf(account, await repo.listAccountChannels(db, orgId, accountId));
  }

  /** The organization of an account named by its id alone (then every read is within that organization). */
  async function organizationOfAccount(accountId: string) {
    const orgId = await repo.findAccountOrganization(db, accountId);
    if (orgId === undefined) throw notFound();
    return orgId;
  }

  async function accountById(accountId: string) {
    const account = await repo.findAccount(db, await organizationOfAccount(accountId), accountId);
    if (!account) throw notFound();
    return account;
  }

  async function addNumberTo(executor: Kysely<DB>, orgId: string, accountId: string, input: NumberInput) {
    const phoneNumberId = input.phone_number_id ?? (deps.platform === 'sandbox' ? sandboxPlatformId() : undefined);
    if (!phoneNumberId) throw validationError(['body', 'phone_number_id'], 'Field required', 'missing');
    try {
      return await repo.insertChannel(executor, {
        org_id: orgId,
        id: newId('ch'),
        account_id: accountId,
        phone: input.phone,
        display_name: input.display_name ?? null,
        phone_number_id: phoneNumberId,
        status: 'live',
        created_at: clock.now(),
      });
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ApiError(409, { code: 'phone_number_id_taken', phone_number_id: phoneNumberId });
      }
      throw error;
    }
  }

  return {
    getOrganization,

    async createOrganization(input: OrganizationInput) {
      checkTimezone(input.timezone, ['body', 'timezone']);
      const now = clock.now();
      return repo.insertOrganization(db, {
        id: newId('org'),
        name: input.name,
        plan: input.plan ?? 'scale',
        trial: input.trial ?? false,
        trial_ends_at: input.trial_ends_at ?? null,
        subscription_status: input.subscription_status ?? 'active',
        timezone: input.timezone ?? 'UTC',
        language: input.language ?? 'en',
        created_at: now,
        updated_at: now,
      });
    },

    async updateOrganization(orgId: string, patch: OrganizationPatch) {
      checkTimezone(patch.timezone, ['body', 'timezone']);
      const updated = await repo.updateOrganization(db, orgId, { ...patch, updated_at: clock.now() });
      if (!updated) throw notFound();
      await announce();
      return updated;
    },

    listOrganizations: () => repo.listOrganizations(db),

    /** An organization's keys, revoked ones too (with `revoked_at`), oldest first; never a secret or a hash. */
    async listApiKeys(orgId: string) {
      await getOrganization(orgId);
      return repo.listApiKeys(db, orgId);
    },

    /** The keys in force (not revoked), as the console lists them. */
    async listActiveApiKeys(orgId: string) {
      return (await repo.listApiKeys(db, orgId)).filter((key) => key.revoked_at === null);
    },

    async createApiKey(orgId: string, input: ApiKeyInput) {
      const scopes = input.scopes ?? [ALL_SCOPES];
      // decisions §18: `*` is every operation, alone; the schema refused unknown, repeated and empty lists.
      if (scopes.length > 1 && scopes.includes(ALL_SCOPES)) {
        throw validationError(
          ['body', 'scopes'],
          '"*" grants every scope and cannot be listed beside others',
          'value_error',
          {
            input: scopes,
          },
        );
      }
      const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
      // An unparseable time (NaN) is refused here too.
      if (expiresAt && !(expiresAt.getTime() > clock.now().getTime())) {
        throw validationError(['body', 'expires_at'], 'Input should be in the future', 'value_error', {
          input: input.expires_at,
        });
      }
      await getOrganization(orgId);
      const generated = generateApiKey();
      const row = await repo.insertApiKey(db, {
        org_id: orgId,
        id: newId('key'),
        name: input.name ?? null,
        key_hash: generated.hash,
        display_prefix: generated.displayPrefix,
        scopes,
        expires_at: expiresAt,
      });
      return {
        id: row.id,
        name: row.name,
        key: generated.key,
        prefix: row.display_prefix,
        scopes: row.scopes,
        expires_at: row.expires_at,
        created_at: row.created_at,
      };
    },

    async revokeApiKey(orgId: string, keyId: string) {
      const revoked = await repo.revokeApiKey(db, orgId, keyId, clock.now());
      // Revoking twice is harmless (and announces again); an unknown key is a 404.
      if (!revoked && !(await repo.findApiKey(db, orgId, keyId))) throw notFound();
      await announce();
    },

    async createMessagingAccount(orgId: string, input: MessagingAccountInput) {
      await getOrganization(orgId);
      const businessAccountId =
        input.business_account_id ?? (deps.platform === 'sandbox' ? sandboxPlatformId() : undefined);
      if (!businessAccountId) throw validationError(['body', 'business_account_id'], 'Field required', 'missing');
      if (deps.platform === 'cloud') {
        const index = (input.numbers ?? []).findIndex((number) => !number.phone_number_id);
        if (index >= 0)
          throw validationError(['body', 'numbers', index, 'phone_number_id'], 'Field required', 'missing');
      }
      const accountId = newId('ma');
      try {
        await db.transaction().execute(async (trx) => {
          const now = clock.now();
          await repo.insertAccount(trx, {
            org_id: orgId,
            id: accountId,
            business_account_id: businessAccountId,
            display_name: input.display_name ?? null,
            balance: input.balance ?? 100,
            prices: JSON.stringify({ ...DEFAULT_PRICES, ...input.prices }),
            messaging_limit_24h: input.messaging_limit_24h ?? 1000,
            created_at: now,
            updated_at: now,
          });
          for (const number of input.numbers ?? []) await addNumberTo(trx, orgId, accountId, number);
        });
      } catch (error) {
        if (isUniqueViolation(error, 'messaging_accounts_business_account_uq')) {
          throw new ApiError(409, { code: 'business_account_id_taken', business_account_id: businessAccountId });
        }
        throw error;
      }
      return accountView(orgId, accountId);
    },

    /** The organization's messaging accounts with their numbers, oldest first (the console's settings, D169). */
    listMessagingAccounts,

    /** The operator's list of an organization's accounts (D223): an unknown organization is a 404. */
    async listOrganizationMessagingAccounts(orgId: string) {
      await getOrganization(orgId);
      return listMessagingAccounts(orgId);
    },

    async getMessagingAccount(accountId: string) {
      return accountView(await organizationOfAccount(accountId), accountId);
    },

    async updateMessagingAccount(accountId: string, patch: MessagingAccountPatch) {
      const account = await accountById(accountId);
      await db.transaction().execute(async (trx) => {
        // The top-up: the balance moves only through its owner (messaging-accounts/accounts.repo.ts).
        if (patch.balance !== undefined) await setBalance(trx, account.org_id, accountId, patch.balance);
        await updateAccountRow(trx, account.org_id, accountId, {
          ...(patch.messaging_limit_24h !== undefined ? { messaging_limit_24h: patch.messaging_limit_24h } : {}),
          ...(patch.display_name !== undefined ? { display_name: patch.display_name } : {}),
          ...(patch.prices
            ? { prices: JSON.stringify({ ...DEFAULT_PRICES, ...account.prices, ...patch.prices }) }
            : {}),
          updated_at: clock.now(),
        });
        // decisions §16 (D226): a new limit may give held recipients room before their `held_until`.
        if (patch.messaging_limit_24h !== undefined)
          await lookAgainAtHeld(trx, account.org_id, { account_id: accountId });
      });
      return accountView(account.org_id, accountId);
    },

    async addNumber(accountId: string, input: NumberInput) {
      const account = await accountById(accountId);
      const channel = await addNumberTo(db, account.org_id, accountId, input);
      return { ...channel, business_account_id: account.business_account_id };
    },

    async removeNumber(accountId: string, numberId: string) {
      const orgId = await organizationOfAccount(accountId);
      const removed = await repo.removeChannel(db, orgId, accountId, numberId, clock.now());
      if (!removed) throw notFound();
    },
  };
}

export type OperatorService = ReturnType<typeof createOperatorService>;
