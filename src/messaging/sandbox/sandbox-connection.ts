// Connects the sandbox to this process's webhook processor: its signed webhooks are handed over in-process, as raw
// bytes with their signature header, exactly as the HTTP route hands over the real platform's.
import type { WebhookProcessor } from '../webhooks.ts';
import type { SandboxPlatform } from './sandbox-platform.ts';

export function connectSandbox(
  sandbox: SandboxPlatform,
  processor: WebhookProcessor,
  businessAccountOfNumber: (phoneNumberId: string) => Promise<string | undefined>,
  appSecret: string,
  lastInboundAt: (phoneNumberId: string, phone: string) => Promise<Date | undefined>,
) {
  sandbox.connect({
    appSecret,
    async deliver(rawBody, signature) {
      const result = await processor.process(rawBody, signature);
      if (!result.ok) throw new Error(`sandbox webhook refused: ${result.reason}`);
    },
    businessAccountOf: businessAccountOfNumber,
    lastInboundAt,
  });
}
