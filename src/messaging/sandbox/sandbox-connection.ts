// Connects the sandbox to this process's inbound processor: its signed callbacks are handed over in-process, as raw
// bytes with their signature header, exactly as the HTTP route hands over the real platform's.

import type { InboundProcessor } from '../inbound.ts';
import type { MediaFetcher } from '../media/media-fetcher.ts';
import type { SandboxPlatform } from './sandbox-platform.ts';

export function connectSandbox(
  sandbox: SandboxPlatform,
  processor: InboundProcessor,
  businessAccountOfNumber: (phoneNumberId: string) => Promise<string | undefined>,
  appSecret: string,
  lastInboundAt: (phoneNumberId: string, phone: string) => Promise<Date | undefined>,
  /** decisions §15: inbound files are fetched from their `media_url` by the service's own fetcher (its address policy). */
  media?: MediaFetcher,
) {
  sandbox.connect({
    ...(media ? { fetchMedia: (url: string) => media.stream(url) } : {}),
    appSecret,
    async deliver(rawBody, signature) {
      const result = await processor.process(rawBody, signature);
      if (!result.ok) throw new Error(`sandbox webhook refused: ${result.reason}`);
    },
    businessAccountOf: businessAccountOfNumber,
    lastInboundAt,
  });
}
