// The channels feature answers the messaging side's questions about what the platform's ids name: which
// organization a business account belongs to, which live number a phone number id is, and (for the sandbox)
// which business account a sending number belongs to, and a live number's platform ids.
import type { Kysely } from 'kysely';
import { organizationOf } from '../../db/directory.ts';
import type { DB } from '../../db/schema.ts';
import type { MessagingDirectory } from '../../messaging/inbound.ts';
import type { SandboxLookup } from '../../messaging/sandbox/sandbox-controls.ts';

export function createMessagingDirectory(db: Kysely<DB>): MessagingDirectory & {
  businessAccountOfNumber(phoneNumberId: string): Promise<string | undefined>;
  liveNumber: SandboxLookup['liveNumber'];
} {
  const liveNumbers = () =>
    db
      .selectFrom('channels')
      .innerJoin('messaging_accounts', (join) =>
        join
          .onRef('messaging_accounts.org_id', '=', 'channels.org_id')
          .onRef('messaging_accounts.id', '=', 'channels.account_id'),
      )
      .where('channels.status', '=', 'live');
  return {
    // The platform's ids → organization through the directory (D313).
    organizationOfAccount: (businessAccountId) => organizationOf(db, 'account', businessAccountId),
    async liveChannel(orgId, phoneNumberId) {
      const row = await db
        .selectFrom('channels')
        .select('id')
        .where('org_id', '=', orgId)
        .where('phone_number_id', '=', phoneNumberId)
        .where('status', '=', 'live')
        .executeTakeFirst();
      return row?.id;
    },
    async businessAccountOfNumber(phoneNumberId) {
      const orgId = await organizationOf(db, 'number', phoneNumberId);
      if (orgId === undefined) return undefined;
      const row = await liveNumbers()
        .select('messaging_accounts.business_account_id')
        .where('channels.org_id', '=', orgId)
        .where('channels.phone_number_id', '=', phoneNumberId)
        .executeTakeFirst();
      return row?.business_account_id;
    },
    liveNumber: (channelId) =>
      liveNumbers()
        .select(['messaging_accounts.business_account_id', 'channels.phone_number_id'])
        .where('channels.id', '=', channelId)
        .executeTakeFirst(),
  };
}
