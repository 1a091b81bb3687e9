// The sandbox's operator controls (decisions §9): each turns an operator's request into the platform event the
// real platform would send, and delivers it as a signed webhook through the service's own handler.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound } from '../../http/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import type { PlatformEvent, SendFailureReason } from '../platform.ts';
import type { SandboxPlatform } from './sandbox-platform.ts';

export interface ReviewInput {
  event: 'APPROVED' | 'REJECTED' | 'PAUSED' | 'DISABLED';
  reason?: string;
  new_category?: 'MARKETING' | 'UTILITY' | 'AUTHENTICATION';
}

export interface StatusInput {
  status: 'delivered' | 'read' | 'failed';
  error?: string;
}

export interface InboundInput {
  channel_id: string;
  from: string;
  text: string;
}

// The platform's codes for failures named in the service's vocabulary; anything else is a generic 131000.
const failureCodes: Partial<Record<SendFailureReason, { code: number; title: string }>> = {
  not_on_network: { code: 131026, title: 'Message undeliverable' },
  payment_required: { code: 131042, title: 'Business eligibility payment issue' },
  template_paused: { code: 132015, title: 'Template is paused' },
  template_disabled: { code: 132016, title: 'Template is disabled' },
  invalid_parameter: { code: 132000, title: 'Template param count mismatch' },
  rate_limited: { code: 131056, title: 'Pair rate limit hit' },
};

export function createSandboxControls(deps: { db: Kysely<DB>; clock: Clock; sandbox: SandboxPlatform }) {
  const { db, clock, sandbox } = deps;

  return {
    async review(templateId: string, input: ReviewInput) {
      const template = await db
        .selectFrom('templates')
        .select(['business_account_id', 'platform_template_id', 'name', 'language', 'category'])
        .where('id', '=', templateId)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (!template) throw notFound();
      if (template.platform_template_id === null) throw new ApiError(409, { code: 'template_not_submitted' });
      const identity = {
        businessAccountId: template.business_account_id,
        platformTemplateId: template.platform_template_id,
        templateName: template.name,
        language: template.language,
      };
      const events: PlatformEvent[] = [
        { kind: 'template_status', ...identity, event: input.event, ...(input.reason ? { reason: input.reason } : {}) },
      ];
      if (input.new_category) {
        events.push({
          kind: 'template_category',
          ...identity,
          previousCategory: template.category,
          newCategory: input.new_category,
        });
      }
      return { webhook: await sandbox.deliver(events) };
    },

    async messageStatus(platformMessageId: string, input: StatusInput) {
      const known = await db
        .selectFrom('messages')
        .innerJoin('channels', (join) =>
          join.onRef('channels.org_id', '=', 'messages.org_id').onRef('channels.id', '=', 'messages.channel_id'),
        )
        .innerJoin('messaging_accounts', (join) =>
          join
            .onRef('messaging_accounts.org_id', '=', 'channels.org_id')
            .onRef('messaging_accounts.id', '=', 'channels.account_id'),
        )
        .select(['messaging_accounts.business_account_id', 'channels.phone_number_id', 'messages.phone'])
        .where('messages.platform_message_id', '=', platformMessageId)
        .where('messages.direction', '=', 'outbound')
        .executeTakeFirst();
      const accepted = sandbox.acceptedMessage(platformMessageId);
      const target = known
        ? { businessAccountId: known.business_account_id, phoneNumberId: known.phone_number_id, to: known.phone }
        : accepted;
      if (!target || target.businessAccountId === '') throw notFound();
      const event: PlatformEvent = {
        kind: 'message_status',
        businessAccountId: target.businessAccountId,
        phoneNumberId: target.phoneNumberId,
        platformMessageId,
        status: input.status,
        recipient: target.to,
        timestamp: clock.now(),
      };
      if (input.status === 'failed') {
        const reason = (input.error ?? 'platform_error') as SendFailureReason;
        const known = failureCodes[reason];
        event.error = known
          ? { code: known.code, title: known.title, message: known.title, reason }
          : {
              code: 131000,
              title: 'Something went wrong',
              message: input.error ?? 'Something went wrong',
              reason: 'platform_error',
            };
      }
      return { webhook: await sandbox.deliver([event]) };
    },

    async inbound(input: InboundInput) {
      const channel = await db
        .selectFrom('channels')
        .innerJoin('messaging_accounts', (join) =>
          join
            .onRef('messaging_accounts.org_id', '=', 'channels.org_id')
            .onRef('messaging_accounts.id', '=', 'channels.account_id'),
        )
        .select(['messaging_accounts.business_account_id', 'channels.phone_number_id'])
        .where('channels.id', '=', input.channel_id)
        .where('channels.status', '=', 'live')
        .executeTakeFirst();
      if (!channel) throw notFound();
      const platformMessageId = sandbox.newMessageId();
      const webhook = await sandbox.deliver([
        {
          kind: 'inbound_message',
          businessAccountId: channel.business_account_id,
          phoneNumberId: channel.phone_number_id,
          platformMessageId,
          from: input.from,
          type: 'text',
          text: input.text,
          timestamp: clock.now(),
        },
      ]);
      return { platform_message_id: platformMessageId, webhook };
    },
  };
}

export type SandboxControls = ReturnType<typeof createSandboxControls>;
