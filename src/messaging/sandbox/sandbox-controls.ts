// The sandbox's operator controls (decisions §9): each turns an operator's request into the platform event the
// real platform would send, and delivers it as a signed webhook through the service's own handler.
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
  // decisions §15: a free-form message outside the customer-service window.
  window_closed: { code: 131047, title: 'Re-engagement message' },
};

/** What the controls need to know about the records they name (implemented by the templates and channels features). */
export interface SandboxLookup {
  /** A live (not deleted) template's platform identity. */
  template(templateId: string): Promise<
    | {
        business_account_id: string;
        platform_template_id: string | null;
        name: string;
        language: string;
        category: string;
      }
    | undefined
  >;
  /** Where an outbound message went: its account, sending number and recipient. */
  outboundMessage(
    platformMessageId: string,
  ): Promise<{ business_account_id: string; phone_number_id: string; phone: string } | undefined>;
  /** A live connected number's platform ids. */
  liveNumber(channelId: string): Promise<{ business_account_id: string; phone_number_id: string } | undefined>;
}

export function createSandboxControls(deps: { clock: Clock; sandbox: SandboxPlatform; lookup: SandboxLookup }) {
  const { clock, sandbox, lookup } = deps;

  return {
    async review(templateId: string, input: ReviewInput) {
      const template = await lookup.template(templateId);
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
      const known = await lookup.outboundMessage(platformMessageId);
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
      const channel = await lookup.liveNumber(input.channel_id);
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
