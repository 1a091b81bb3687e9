// Connects the sandbox to this app's webhook processor: its signed webhooks are handed over in-process, as raw
// bytes with their signature header, exactly as the HTTP route hands over the real platform's.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { WebhookProcessor } from '../webhooks.ts';
import type { SandboxPlatform } from './sandbox-platform.ts';

export function connectSandbox(
  sandbox: SandboxPlatform,
  processor: WebhookProcessor,
  db: Kysely<DB>,
  appSecret: string,
) {
  sandbox.connect({
    appSecret,
    async deliver(rawBody, signature) {
      const result = await processor.process(rawBody, signature);
      if (!result.ok) throw new Error(`sandbox webhook refused: ${result.reason}`);
    },
    async businessAccountOf(phoneNumberId) {
      const row = await db
        .selectFrom('channels')
        .innerJoin('messaging_accounts', (join) =>
          join
            .onRef('messaging_accounts.org_id', '=', 'channels.org_id')
            .onRef('messaging_accounts.id', '=', 'channels.account_id'),
        )
        .select('messaging_accounts.business_account_id')
        .where('channels.phone_number_id', '=', phoneNumberId)
        .where('channels.status', '=', 'live')
        .executeTakeFirst();
      return row?.business_account_id;
    },
  });
}
